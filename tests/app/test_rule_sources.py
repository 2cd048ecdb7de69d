"""A rule answer that states the price list's figures (the terms' hours 24 / 168 / 720, the billing rules) cites
the price list as well as the glossary: in the domain's data, on every front (HTML and plain text) and in
``--json``. One that states none of them does not."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from app.intents import CATALOG_FILES
from app.pipeline import ReplyPipeline
from app.reply import CatalogReply, LifecycleReply
from app.views.reply import render_text, reply_json
from dev.telegram_stub import parse_html
from gpu.prices import TERM_HOURS
from infra.i18n import Lang, t
from infra.markup import HTML, PLAIN
from infra.settings import REPO_ROOT
from rag.glossary import glossary_file
from rag.rules import RuleBook
from tests.app.support import build_pipeline

DATA = REPO_ROOT / "data"
PRICE_LIST = {"id": "price_list", "term": "", "definition": "", "source": "data/prices.yaml"}


@pytest.fixture(scope="module")
def bare() -> ReplyPipeline:
    return build_pipeline(semantic=False)  # rules and the rental lifecycle route without the e5 router


def _shown(reply: CatalogReply | LifecycleReply, pipeline: ReplyPipeline) -> list[str]:
    """The reply as Telegram (HTML, read as the user sees it) and the console / CLI (plain text) show it."""
    return [parse_html(render_text(reply, pipeline.data, HTML)), render_text(reply, pipeline.data, PLAIN)]


def test_the_hours_a_rule_derives_are_the_price_lists() -> None:
    """What makes the price list the source: the derived statement's figures are the quote engine's term hours."""
    book = RuleBook(DATA, glossary_file(DATA))
    derived = [rule for rule in book.rules() if rule.derived]
    assert derived, "a rule states the terms' hours"
    for rule in derived:
        for lang in ("ru", "en"):
            assert [int(n) for n in re.findall(r"\d+", rule.derived[lang])] == sorted(TERM_HOURS.values())


@pytest.mark.parametrize(("question", "lang"), [("сколько часов в неделе аренды?", "ru"),
                                                ("how many hours is a month rental?", "en")])
async def test_a_rule_answer_stating_the_terms_hours_cites_the_price_list(
        bare: ReplyPipeline, question: str, lang: Lang) -> None:
    reply = await bare.reply(question)
    assert isinstance(reply, CatalogReply) and reply.intent.kind == "rule", reply
    assert reply.intent.catalogs == ("price_list",)
    source_line = {"ru": "Источник: Фиксированный срок аренды — глоссарий и правила AnchorGPU; Прайс-лист.",
                   "en": "Source: Фиксированный срок аренды — AnchorGPU glossary and rules; Price list."}[lang]
    for shown in _shown(reply, bare):
        assert "168" in shown and "720" in shown, shown
        assert source_line in shown, shown
    sources = reply_json(reply, bare.data)["sources"]
    assert [s["id"] for s in sources] == ["002-rental-term", "price_list"]
    assert sources[1] == {**PRICE_LIST, "term": t("source_price_list", lang)}


async def test_a_rule_answer_without_the_price_lists_figures_cites_the_glossary_only(bare: ReplyPipeline) -> None:
    reply = await bare.reply("можно ли остановить аренду и не платить за оставшуюся неделю?")
    assert isinstance(reply, CatalogReply) and reply.intent.catalogs == ()
    for shown in _shown(reply, bare):
        assert "Прайс-лист" not in shown and "168" not in shown
    assert [s["id"] for s in reply_json(reply, bare.data)["sources"]] == ["002-rental-term"]


@pytest.mark.parametrize(("question", "topic", "cites"), [
    ("what is the minimum rental term?", "billing", True),  # the terms (day, 7 days, 30 days), the started hour
    ("спотовую карту могут забрать посреди обучения?", "spot", True),
    ("можно продлить аренду?", "extend", False),  # how the product manages rentals: no price-list figures
    ("что будет когда закончится оплаченный срок аренды?", "end_of_term", False),
])
async def test_a_lifecycle_answer_cites_the_price_list_when_it_states_its_billing_rules(
        bare: ReplyPipeline, question: str, topic: str, cites: bool) -> None:
    reply = await bare.reply(question)
    assert isinstance(reply, LifecycleReply) and reply.answer is not None and reply.answer.topic == topic, reply
    assert reply.answer.catalogs == (("price_list",) if cites else ())
    ids = [s["id"] for s in reply_json(reply, bare.data)["sources"]]
    assert ("price_list" in ids) == cites and "product_rules" in ids
    for shown in _shown(reply, bare):
        assert (f"{t('source_label', reply.lang)}: {t('source_price_list', reply.lang)}." in shown) == cites, shown


def test_anchorgpu_ask_json_lists_the_price_list() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "anchorgpu", "ask", "--json", "сколько часов в неделе аренды?"],
                          capture_output=True, text=True, env=env, cwd=REPO_ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["intent"] == "rule" and "168" in document["answer"]
    assert {"id": "price_list", "source": CATALOG_FILES["price_list"]}.items() <= document["sources"][-1].items()


def test_an_english_question_gets_the_rule_in_our_reviewed_english_with_the_russian_one_tap_away() -> None:
    from app.intents import Intent
    from app.views.catalog import render_rule_answer

    book = RuleBook(DATA, glossary_file(DATA))
    answers = book.match("my script keeps retrying the create call on timeout — will i get billed twice?")
    assert [a.rule.id for a in answers] == ["idempotency-key-reuse"] and answers[0].english is not None
    intent = Intent("rule", "q", rules=tuple(answers))
    html = render_rule_answer(intent, "en", HTML)
    assert "<blockquote>An identifier that lets" in html and "our reviewed translation" in html
    assert f"<blockquote expandable>{t('answer_original', 'en')}\n{answers[0].entry.definition.split()[0]}" in html
    plain = render_rule_answer(intent, "en", PLAIN)
    assert not plain.startswith(("Yes", "No")), "charged twice is what the key prevents, on a condition"
    # a Russian question keeps the glossary's words alone; an entry edited since its rendering, too
    assert "An identifier" not in render_rule_answer(intent, "ru", PLAIN)
    from dataclasses import replace
    stale = Intent("rule", "q", rules=(replace(answers[0], english=None),))
    assert "quoted verbatim in Russian" in render_rule_answer(stale, "en", PLAIN)
