"""Inline mode: ``@ourbot kv cache`` in any chat returns glossary cards from retrieval (no LLM)."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from aiogram import Router
from aiogram.types import InlineQuery, InlineQueryResultArticle, InputTextMessageContent

from anchorgpu.lru import LRUCache
from anchorgpu.texts import Lang
from bot.rendering import render_card, split_html

router = Router(name=__name__)
MAX_RESULTS = 10


def _result_id(entry_id: str) -> str:
    # result ids are limited to 64 bytes
    return entry_id if len(entry_id.encode()) <= 64 else hashlib.sha1(entry_id.encode()).hexdigest()


def cards(hits: list[Any], lang: Lang) -> list[Any]:
    results: list[Any] = []
    for hit in hits[:MAX_RESULTS]:
        entry = getattr(hit, "entry", hit)
        card = split_html(render_card(entry.term, entry.definition, entry.source, lang))[0]
        results.append(InlineQueryResultArticle(
            id=_result_id(entry.id), title=entry.term, description=entry.definition[:200],
            input_message_content=InputTextMessageContent(message_text=card, parse_mode="HTML",
                                                          link_preview_options=None)))
    return results


# Recent inline answers by query and language. The glossary does not change while the bot runs, and
# people type and retype the same few terms, so a repeat skips retrieval and rendering.
CARDS: LRUCache[tuple[str, Lang], list[Any]] = LRUCache(512)


@router.inline_query()
async def on_inline(query: InlineQuery, services: Any, lang: Lang) -> None:
    text = query.query.strip()
    retriever = getattr(services, "retriever", None)
    if not text or retriever is None:
        await query.answer([], cache_time=5, is_personal=False)
        return
    key = (" ".join(text.lower().split()), lang)
    results = CARDS.get(key)
    if results is None:
        result = await asyncio.to_thread(retriever.search, text, MAX_RESULTS)
        # Out of scope means the best hits are noise: show nothing rather than unrelated cards.
        results = cards(list(result.hits) if result.in_scope else [], lang)
        CARDS.put(key, results)
    await query.answer(results, cache_time=30 if results else 5, is_personal=False)
