"""The routing evaluation set (tests/eval/routing.yaml) through its pydantic model: a broken item is refused
with one message naming the file, the line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from dev.bench.routing import EVAL_FILE, load_items
from infra.yamlfile import YamlFileError

ITEM = """\
  - id: {id}
    text: {text}
    route: {route}
    class: fit_other_words
    part: dev
    slots:
      gpus: [rtx-3090]
"""


def write(tmp_path: Path, *items: str) -> Path:
    path = tmp_path / "routing.yaml"
    path.write_text("# a small set\nitems:\n" + "".join(items), encoding="utf-8")
    return path


def test_the_shipped_set_loads() -> None:
    items = load_items(EVAL_FILE)
    assert len(items) >= 400 and {item.part for item in items} == {"dev", "heldout"}


def test_a_good_item_and_a_repeated_text(tmp_path: Path) -> None:
    path = write(tmp_path, ITEM.format(id="a", text="потянет ли 3090 qwen 32b", route="fit"),
                 ITEM.format(id="b", text="ab", route="fit").replace("    part: dev\n", "    repeat: 5\n"))
    first, second = load_items(path)
    assert (first.cls, first.slots) == ("fit_other_words", {"gpus": ["rtx-3090"]})
    assert second.text == "ababa" and second.part == "dev"


@pytest.mark.parametrize(("old", "new", "line", "field", "what"), [
    ("    part: dev", "    part: test", 7, "items[1].part", "'dev' or 'heldout'"),
    ("      gpus: [rtx-3090]", "      gpu: [rtx-3090]", 9, "items[1].slots.gpu", "unknown field"),
    ("    class: fit_other_words", "    klass: fit_other_words", 6, "items[1].klass", "did you mean 'class'?"),
    ("    route: fit", "    route: [fit]", 5, "items[1].route", "valid string"),
])
def test_a_broken_eval_item_names_the_file_the_line_and_the_field(tmp_path: Path, old: str, new: str, line: int,
                                                                  field: str, what: str) -> None:
    second = ITEM.format(id="b", text="h100 на неделю", route="fit").replace(old, new, 1)
    path = write(tmp_path, ITEM.format(id="a", text="x", route="fit"), second)
    # the set is 2 header lines and 7 lines per item: the second item starts on line 10
    line += 7
    with pytest.raises(YamlFileError) as caught:
        load_items(path)
    message = str(caught.value)
    assert message.startswith(f"{path}, line {line}: {field}: "), message
    assert what in message and ";" not in message


def test_a_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path, ITEM.format(id="a", text="x", route="fit"), ITEM.format(id="a", text="y", route="fit"))
    with pytest.raises(YamlFileError, match=rf"^{path}, line 10: items\[1\]\.id: duplicate id 'a' \(first at line 3\)"):
        load_items(path)
