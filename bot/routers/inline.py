"""Inline mode: ``@ourbot kv cache`` in any chat returns glossary cards from retrieval (no LLM)."""

from __future__ import annotations

import asyncio
import hashlib

from aiogram import Router
from aiogram.types import InlineQuery, InlineQueryResultArticle, InputTextMessageContent
from aiogram.types.inline_query_result_union import InlineQueryResultUnion

from app.views.answer import render_card
from bot.output.rendering import split_html
from infra.i18n import Lang
from infra.lru import LRUCache
from infra.markup import HTML
from rag.glossary import GlossaryEntry
from rag.retrieval.retriever import Hit, HybridRetriever

router = Router(name=__name__)
MAX_RESULTS = 10


def _result_id(entry_id: str) -> str:
    # result ids are limited to 64 bytes
    return entry_id if len(entry_id.encode()) <= 64 else hashlib.sha1(entry_id.encode()).hexdigest()


def cards(hits: list[Hit] | list[GlossaryEntry], lang: Lang) -> list[InlineQueryResultUnion]:
    results: list[InlineQueryResultUnion] = []
    for hit in hits[:MAX_RESULTS]:
        entry = hit.entry if isinstance(hit, Hit) else hit
        card = split_html(render_card(entry, lang, HTML))[0]
        results.append(InlineQueryResultArticle(
            id=_result_id(entry.id), title=entry.term, description=entry.definition[:200],
            input_message_content=InputTextMessageContent(message_text=card, parse_mode="HTML",
                                                          link_preview_options=None)))
    return results


# Recent inline answers by glossary version, query and language: people type and retype the same few terms,
# so a repeat skips retrieval and rendering. The glossary changes while the bot runs (rag.retrieval.reload), and an
# edited entry must show its new text at once: a reload gives the served glossary a new version, so the
# cards of the old one are never found again (they age out of the LRU).
CARDS: LRUCache[tuple[int, str, Lang], list[InlineQueryResultUnion]] = LRUCache(512)


@router.inline_query()
async def on_inline(query: InlineQuery, retriever: HybridRetriever | None, lang: Lang) -> None:
    text = query.query.strip()
    if not text or retriever is None:
        await query.answer([], cache_time=5, is_personal=False)
        return
    # the version is read before the search: a reload in between stores newer cards under the old version
    # (never looked up again), never old cards under the new one
    key = (retriever.version, " ".join(text.lower().split()), lang)
    results = CARDS.get(key)
    if results is None:
        result = await asyncio.to_thread(retriever.search, text, MAX_RESULTS)
        # Out of scope means the best hits are noise: show nothing rather than unrelated cards.
        results = cards(list(result.hits) if result.in_scope else [], lang)
        CARDS.put(key, results)
    await query.answer(results, cache_time=30 if results else 5, is_personal=False)
