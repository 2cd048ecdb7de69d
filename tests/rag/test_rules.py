"""The company's rules: quoted verbatim from the glossary, with the yes/no a phrasing of the question implies."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rag.glossary import glossary_file
from rag.rules import RuleBook, RulesError, single_verdict
from tests.conftest import DATA_DIR

BOOK = RuleBook(DATA_DIR, glossary_file(DATA_DIR))


def test_every_rule_quotes_its_entry_verbatim() -> None:
    BOOK.check()
    assert {rule.id for rule in BOOK.rules()} >= {"stop-does-not-pause", "week-and-month-lengths",
                                                  "idempotency-key-reuse"}


@pytest.mark.parametrize(("question", "verdict"), [
    ("можно ли остановить аренду и не платить за оставшуюся неделю?", "no"),
    ("Если я остановлю аренду, мне вернут деньги за оставшиеся дни?", "no"),
    ("если поставить размещение на паузу, оплата приостановится?", "no"),
    ("придётся ли платить, если я остановлю аренду?", "yes"),
    ("если я выключу сервер, списание продолжится?", "yes"),
    ("Can I stop my rental and not pay for the rest of the week?", "no"),
    ("does stopping a placement pause billing?", "no"),
    ("if I stop the rental, will I still be charged?", "yes"),
    ("will I get a refund if I stop early?", "no"),
    ("месяц аренды это 31 день?", "no"),
    ("неделя аренды — это 7 дней?", "yes"),
    ("is a rental month 30 days?", "yes"),
    ("месяц аренды считается календарным?", "no"),
    ("можно ли использовать тот же ключ идемпотентности для другой покупки?", "no"),
    ("can I reuse an idempotency key for a different order?", "no"),
    ("should I reuse the idempotency key when I retry the same request?", "yes"),
    # typos: one letter off in the words that matter
    ("можно остоновить аренду и не плотить за остаток недели?", "no"),
    # ending a rental early, in the words customers use for it
    ("Can I cancel my rental early and get a refund for the unused days?", "no"),
    ("I want to end the rental now, will I get money back for the rest of the month?", "no"),
    ("можно отменить аренду досрочно и получить возврат?", "no"),
    ("если я верну сервер раньше, перерасчёт будет?", "no"),
    ("if I terminate the instance, is the rest of the month prorated?", "no"),
])
def test_yes_no_questions_get_the_answer_the_rule_implies(question: str, verdict: str) -> None:
    answers = BOOK.match(question)
    assert answers, question
    assert single_verdict(answers) == verdict


@pytest.mark.parametrize("question", [
    "что будет, если остановить аренду?", "what happens when I stop a placement?",
    # a charge doubled is what the key prevents when a retry reuses it: "Yes." read as "you will be charged twice"
    "my script keeps retrying the create call on timeout — will i get billed twice?",
    "my checkout request timed out and I hit retry. could I get charged twice?",
    "скрипт повторяет запрос на создание инстанса при таймауте, спишут дважды?",
    "если повторить запрос на оплату, деньги спишутся два раза?",
])
def test_an_open_question_about_a_rule_quotes_it_without_a_yes_or_no(question: str) -> None:
    answers = BOOK.match(question)
    assert answers and single_verdict(answers) is None


@pytest.mark.parametrize("question", ["что такое NVLink?", "сколько стоит H100 на неделю", "how do I stop a process?"])
def test_other_questions_are_not_about_a_rule(question: str) -> None:
    assert [a.rule.id for a in BOOK.match(question) if a.rule.id == "stop-does-not-pause"] == []


def test_a_rule_quoting_words_its_entry_does_not_have_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR / "glossary", data / "glossary")
    rules = data / "glossary" / "rules.yaml"
    rules.write_text(rules.read_text(encoding="utf-8").replace(
        "не приостанавливает оплаченный период", "приостанавливает оплаченный период", 1), encoding="utf-8")
    with pytest.raises(RulesError, match="not in the definition"):
        RuleBook(data, glossary_file(data)).check()


def test_the_typo_vocabulary_follows_an_edit_of_the_rules_and_of_the_glossary(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR / "glossary", data / "glossary")
    book = RuleBook(data, glossary_file(data))
    assert "zettascale" not in book.vocabulary() and "teplocube" not in book.vocabulary()
    assert book.corrected("a zetascale rule") == "a zetascale rule"

    rules = data / "glossary" / "rules.yaml"
    rules.write_text(rules.read_text(encoding="utf-8").replace(
        "en: In this catalog a week", "en: In this zettascale catalog a week", 1), encoding="utf-8")
    assert "zettascale" in book.vocabulary(), "the rules file was edited, the glossary was not"
    assert book.corrected("a zetascale rule") == "a zettascale rule"

    entries = data / "glossary" / "entries.yaml"
    entries.write_text(entries.read_text(encoding="utf-8").replace(
        "Высокоскоростная межсоединительная шина NVIDIA",
        "Высокоскоростная межсоединительная шина NVIDIA (TeploCube)", 1), encoding="utf-8")
    assert "teplocube" in book.vocabulary()
