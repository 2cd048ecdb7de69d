"""The rules file (data/glossary/rules.yaml) through its pydantic model: a broken edit is refused with one
message naming the file, the line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag.rules import RULES_FILE, RulesError, read_rules_document
from tests.conftest import DATA_DIR

SHIPPED = (DATA_DIR / RULES_FILE).read_text(encoding="utf-8")


def edit(tmp_path: Path, old: str, new: str) -> tuple[Path, str]:
    text = SHIPPED.replace(old, new, 1)
    assert text != SHIPPED
    path = tmp_path / "rules.yaml"
    path.write_text(text, encoding="utf-8")
    return path, text


@pytest.mark.parametrize(("old", "new", "field", "what"), [
    ("    entry: 002-rental-term", "    entri: 002-rental-term", "rules[0].entri", "unknown field"),
    ("      week: 7", "      fortnight: 14", "rules[1].numbers.fortnight (key)", "'week' or 'month'"),
    ("      week: 7", "      week: seven", "rules[1].numbers.week", "valid integer"),
    ("      ru: 'По прайс-листу", "      rus: 'По прайс-листу", "rules[1].derived.rus", "unknown field"),
    ("      - '(календар|calendar)'", "      - '(календар|calendar'", "rules[1].answer_no[0]",
     "not a valid regular expression"),
])
def test_a_broken_rules_file_names_the_file_the_line_and_the_field(tmp_path: Path, old: str, new: str,
                                                                   field: str, what: str) -> None:
    path, text = edit(tmp_path, old, new)
    with pytest.raises(RulesError) as caught:
        read_rules_document(path)
    message = str(caught.value)
    line = next(number for number, row in enumerate(text.splitlines(), 1) if row.startswith(new))
    assert message.startswith(f"{path}, line {line}: {field}: "), message
    assert what in message and ";" not in message


def test_a_rule_without_about_or_without_rules(tmp_path: Path) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text("rules:\n  - id: r\n    entry: e\n    quote: q\n    en: e\n    about: []\n", encoding="utf-8")
    with pytest.raises(RulesError, match=rf"^{path}, line 6: rules\[0\]\.about: List should have at least 1 item"):
        read_rules_document(path)
    path.write_text("# nothing yet\n", encoding="utf-8")
    with pytest.raises(RulesError, match=rf"^{path}: rules: required"):
        read_rules_document(path)


def test_the_shipped_rules_read_as_before() -> None:
    document = read_rules_document(DATA_DIR / RULES_FILE)
    lengths = next(rule for rule in document.rules if rule.id == "week-and-month-lengths")
    assert lengths.numbers == {"week": 7, "month": 30} and set(lengths.derived) == {"ru", "en"}
    assert all(rule.about for rule in document.rules) and document.caveats
