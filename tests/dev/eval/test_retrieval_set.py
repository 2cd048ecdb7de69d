"""The retrieval evaluation set (tests/eval/questions.yaml) through its pydantic model: a broken question is
refused with one message naming the file, the line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from dev.eval.retrieval import EVAL_FILE, load_eval_set
from infra.yamlfile import YamlFileError

SET = """\
in_scope:
  - q: что такое kv cache
    lang: ru
    kind: name
    expect: [000-kv-cache]
out_of_scope:
  - какая погода завтра
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "questions.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_shipped_set_and_a_small_one_load(tmp_path: Path) -> None:
    assert len(load_eval_set(EVAL_FILE).in_scope) >= 100
    small = load_eval_set(write(tmp_path, SET))
    assert small.in_scope[0].expect == frozenset({"000-kv-cache"}) and small.out_of_scope == ["какая погода завтра"]


@pytest.mark.parametrize(("old", "new", "line", "field", "what"), [
    ("    lang: ru", "    lang: de", 3, "in_scope[0].lang", "'ru' or 'en'"),
    ("    kind: name", "    kind: riddle", 4, "in_scope[0].kind", "Input should be"),
    ("    expect: [000-kv-cache]", "    expect: []", 5, "in_scope[0].expect", "at least 1 item"),
    ("    expect: [000-kv-cache]", "    expected: [000-kv-cache]", 5, "in_scope[0].expected",
     "did you mean 'expect'?"),
    ("  - какая погода завтра", "  - {q: какая погода}", 7, "out_of_scope[0]", "valid string"),
])
def test_a_broken_eval_set_names_the_file_the_line_and_the_field(tmp_path: Path, old: str, new: str, line: int,
                                                                 field: str, what: str) -> None:
    path = write(tmp_path, SET.replace(old, new, 1))
    with pytest.raises(YamlFileError) as caught:
        load_eval_set(path)
    message = str(caught.value)
    assert message.startswith(f"{path}, line {line}: {field}: "), message
    assert what in message and ";" not in message
