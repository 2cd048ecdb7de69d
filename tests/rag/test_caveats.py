"""Seed 002's disclaimer ("definitions do not guarantee that a workload is supported") ends every answer
that cites one of 002's entries, verbatim, on every path (rule answers, quoted and generated answers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.views.answer import answer_json, render_reply
from app.views.catalog import render_rule_answer
from infra.markup import HTML
from infra.settings import REPO_ROOT
from rag.answering.events import Answer
from rag.glossary import glossary_file, read_glossary
from rag.rules import Caveat, RuleBook, RulesError

DATA = REPO_ROOT / "data"
DISCLAIMER_START = "Определения объясняют концепцию"


@pytest.fixture(scope="module")
def book() -> RuleBook:
    rules = RuleBook(DATA, glossary_file(DATA))
    rules.check()
    return rules


def test_the_glossary_keeps_the_seeds_notes_verbatim() -> None:
    glossary = read_glossary(DATA / "glossary" / "entries.yaml")
    notes = [note for note in glossary.notes if note.source.startswith("002_")]
    assert len(notes) == 1 and notes[0].text.startswith(DISCLAIMER_START)
    seed = next((REPO_ROOT.parent / "shared" / "seeds").glob("002_*.txt"), None)
    if seed is not None:  # the user's own document, where the checkout has it beside
        assert notes[0].text in " ".join(seed.read_text(encoding="utf-8").split())


def test_only_answers_citing_002_carry_its_caveat(book: RuleBook) -> None:
    entries = {e.id: e for e in glossary_file(DATA).get()}
    from_002 = [e for e in entries.values() if e.source.startswith("002_")]
    others = [e for e in entries.values() if not e.source.startswith("002_")]
    assert from_002 and others
    (caveat,) = book.caveats_for(from_002[:2])
    assert caveat.quote.startswith(DISCLAIMER_START) and caveat.en.startswith("Definitions explain")
    assert book.caveats_for(others[:5]) == ()
    assert book.caveats_for([]) == ()


def test_a_rule_answer_quotes_the_caveat_in_both_languages(book: RuleBook) -> None:
    from app.intents import Intent

    answers = book.match("можно ли остановить аренду и не платить за оставшуюся неделю?")
    assert answers and all(a.caveats for a in answers)
    intent = Intent("rule", "q", rules=tuple(answers))
    ru = render_rule_answer(intent, "ru")
    assert f"«{answers[0].caveats[0].quote}»" in ru and "Оговорка из глоссария" in ru
    en = render_rule_answer(intent, "en", HTML)
    assert f"<blockquote>{answers[0].caveats[0].quote}</blockquote>" in en
    assert "In English: Definitions explain the concept" in en


def test_a_reply_ends_with_the_caveats_after_the_sources() -> None:
    entry = next(e for e in glossary_file(DATA).get() if e.source.startswith("002_"))
    caveat = Caveat(entry.source, "Определения объясняют концепцию.", "Definitions explain the concept.")
    answer = Answer(generated="VRAM — память ускорителя [1].", grounded=True, sources=[entry], model="m", ttft_s=0.0,
                    tokens=0, status="answered", lang="ru", caveats=(caveat,))
    text = render_reply(answer)
    assert text.index("Источники") < text.index("«Определения объясняют концепцию.»")
    assert answer_json(answer)["caveats"] == [{"source": entry.source, "text": "Определения объясняют концепцию."}]


def test_a_caveat_that_is_not_a_note_of_its_source_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "glossary").mkdir(parents=True)
    (data / "glossary" / "entries.yaml").write_text((DATA / "glossary" / "entries.yaml").read_text("utf-8"), "utf-8")
    rules = (DATA / "glossary" / "rules.yaml").read_text("utf-8")
    (data / "glossary" / "rules.yaml").write_text(
        rules.replace("Определения объясняют концепцию;", "Определения гарантируют всё;"), "utf-8")
    with pytest.raises(RulesError, match="caveat of 002_"):
        RuleBook(data, glossary_file(data)).check()
