"""Where an answer comes from, as a customer reads it: the document's title («Фиксированный срок аренды —
глоссарий и правила AnchorGPU»), never a seed's file name, on every front (Telegram HTML, the console chat and
``anchorgpu ask``, which print the plain text); ``--json`` keeps the file name for the tools that parse it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from anchorgpu.replies import render_sources as console_sources
from app.pipeline import ReplyPipeline
from app.reply import CatalogReply, LifecycleReply
from app.views.answer import answer_json, render_card, render_reply, source_title
from app.views.reply import render_text, reply_json
from dev.telegram_stub import parse_html
from infra.i18n import Lang, has
from infra.markup import HTML, PLAIN, Markup
from infra.settings import REPO_ROOT
from rag.answering.events import Answer
from rag.glossary import glossary_file
from rag.rules import RuleBook
from tests.app.support import build_pipeline

DATA = REPO_ROOT / "data"
RULES_SEED = "002_e07c44d197553e41.txt"
RULE_SOURCE = {"ru": "Фиксированный срок аренды — глоссарий и правила AnchorGPU",
               "en": "Фиксированный срок аренды — AnchorGPU glossary and rules"}


@pytest.fixture(scope="module")
def bare() -> ReplyPipeline:
    return build_pipeline(semantic=False)  # rules and the rental lifecycle route without the e5 router


def test_every_document_the_glossary_cites_has_a_title_in_both_languages() -> None:
    glossary = glossary_file(DATA).get()
    seeds = {entry.source for entry in glossary} | {note.source for note in glossary.notes}
    seeds |= {caveat.source for caveat in RuleBook(DATA, glossary_file(DATA))._document.get().caveats}
    assert RULES_SEED in seeds and len(seeds) >= 4
    for seed in sorted(seeds):
        assert has(f"source_title_{seed.removesuffix('.txt')}"), f"{seed}: no title in infra/i18n/messages"
        for lang in ("ru", "en"):
            assert ".txt" not in source_title(seed, lang) and "_" not in source_title(seed, lang)
    assert source_title(RULES_SEED, "ru") == "глоссарий и правила AnchorGPU"
    assert source_title("000_9a9371b59a12d732.txt", "ru") == "Глоссарий ML и GPU"  # the seed's own title
    # an entry added while the bot runs, from a document nobody titled yet: the glossary, not its file name
    assert source_title("999_reload_test.txt", "ru") == "глоссарий AnchorGPU"


@pytest.mark.parametrize(("question", "lang", "kind"), [
    ("сколько часов в неделе аренды?", "ru", CatalogReply),  # a rule quoted («Источник: …» in the bug report)
    ("можно ли остановить аренду и не платить за оставшуюся неделю?", "ru", CatalogReply),
    ("what is the minimum rental term?", "en", LifecycleReply),  # the quote engine's rules, the glossary's quoted
    ("что будет когда закончится оплаченный срок аренды?", "ru", LifecycleReply),
    ("можно продлить аренду?", "ru", LifecycleReply),
])
async def test_a_rule_answer_names_the_company_rules_not_a_file(bare: ReplyPipeline, question: str, lang: Lang,
                                                                kind: type) -> None:
    reply = await bare.reply(question)
    assert isinstance(reply, kind), reply
    markups: tuple[Markup, ...] = (HTML, PLAIN)  # Telegram; the console chat and `anchorgpu ask`
    for markup in markups:
        shown = render_text(reply, bare.data, markup)
        seen = parse_html(shown) if markup.html else shown
        assert RULE_SOURCE[lang] in seen, seen
        assert ".txt" not in seen and "002_" not in seen, seen
    document = reply_json(reply, bare.data)
    assert ".txt" not in document["answer"]
    assert RULES_SEED in {source["source"] for source in document["sources"]}, "--json keeps the file name"


def _glossary_answer(lang: Lang) -> Answer:
    entries = {entry.id: entry for entry in glossary_file(DATA).get()}
    book = RuleBook(DATA, glossary_file(DATA))
    sources = [entries["000-nvlink"], entries["002-rental-term"]]
    return Answer(generated="NVLink [1]. Неделя — 7 дней [2].", grounded=True, sources=sources, model="test",
                  ttft_s=0.0, tokens=0, status="answered", lang=lang, caveats=book.caveats_for(sources))


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_a_glossary_answer_and_a_card_show_titles_on_every_front(lang: Lang) -> None:
    answer = _glossary_answer(lang)
    nvlink, rental = (f"{entry.term} — {source_title(entry.source, lang)}" for entry in answer.sources)
    telegram = parse_html(render_reply(answer, HTML))
    console = console_sources(answer)  # the console chat and `anchorgpu ask` print the streamed answer, then this
    for shown in (telegram, render_reply(answer, PLAIN), console):
        assert f"[1] {nvlink}" in shown and f"[2] {rental}" in shown, shown
        assert ".txt" not in shown, shown
    assert console.strip().splitlines()[1:] == [f"[1] {nvlink} (000-nvlink)", f"[2] {rental} (002-rental-term)"]
    assert [source["source"] for source in answer_json(answer)["sources"]] == ["000_9a9371b59a12d732.txt", RULES_SEED]
    card = parse_html(render_card(answer.sources[0], lang, HTML))  # inline mode and /terms
    assert card.endswith(("Источник: Глоссарий ML и GPU", "Source: ML and GPU glossary")) and ".txt" not in card


def test_a_web_page_source_stays_a_link() -> None:
    page = replace(_glossary_answer("en").sources[0], source="https://example.com/nvlink")
    assert '<a href="https://example.com/nvlink">' in render_card(page, "en", HTML)


@pytest.mark.long
def test_anchorgpu_ask_prints_the_title_and_its_json_keeps_the_file_name() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "HF_HUB_OFFLINE": "1"}
    question = "сколько часов в неделе аренды?"
    ask = [sys.executable, "-m", "anchorgpu", "ask"]
    printed = subprocess.run([*ask, question], capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=300)
    assert printed.returncode == 0, printed.stderr
    assert RULE_SOURCE["ru"] in printed.stdout and ".txt" not in printed.stdout, printed.stdout
    as_json = subprocess.run([*ask, "--json", question], capture_output=True, text=True, env=env, cwd=REPO_ROOT,
                             timeout=300)
    document = json.loads(as_json.stdout)
    assert document["intent"] == "rule" and ".txt" not in document["answer"]
    assert document["sources"][0]["source"] == RULES_SEED
