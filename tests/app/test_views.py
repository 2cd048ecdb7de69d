"""The views every front shares: the same words as Telegram HTML (escaped, valid) and as plain text."""

from __future__ import annotations

from app.views.answer import render_answer, render_card
from dev.telegram_stub import parse_html
from infra.markup import HTML, PLAIN
from rag.glossary import GlossaryEntry


def entry(term: str, source: str, definition: str = "", entry_id: str = "") -> GlossaryEntry:
    return GlossaryEntry(id=entry_id or term.lower().replace(" ", "-"), term=term, aliases=(),
                         definition=definition, source=source, category="basics", concept=term.lower())


def test_render_answer_escapes_model_text_and_lists_sources() -> None:
    sources = [entry("KV <cache>", "https://example.com/kv?a=1&b=2"), entry("GQA", "seed 001")]
    html_text = render_answer("Use <script> & [1] vs [2]", sources, "en", HTML)
    plain = parse_html(html_text)
    assert "Use <script> & [1] vs [2]" in plain
    assert "Sources" in plain and "[1] KV <cache> — https://example.com/kv?a=1&b=2" in plain
    assert "[2] GQA — AnchorGPU glossary" in plain  # a document without a title: the glossary's
    assert 'href="https://example.com/kv?a=1&amp;b=2"' in html_text


def test_the_plain_answer_has_the_same_words_and_names_the_entry_ids() -> None:
    sources = [entry("KV <cache>", "kv.txt", entry_id="kv")]
    text = render_answer("Use <script> & [1]", sources, "en", PLAIN)
    assert text.startswith("Use <script> & [1]")
    assert "Sources:\n[1] KV <cache> — AnchorGPU glossary (kv)" in text  # a title, never the file name


def test_card() -> None:
    card = render_card(entry("PagedAttention", "https://vllm.ai", "Страничный <KV>-кэш"), "ru", HTML)
    assert parse_html(card).startswith("PagedAttention")
    assert "Страничный <KV>-кэш" in parse_html(card)
    assert "Источник: https://vllm.ai" in parse_html(card)
    assert render_card(entry("GQA", "seed", "Группы"), "en", PLAIN) == "GQA\n\nГруппы\n\nSource: AnchorGPU glossary"
