"""YAML data files through pydantic: every error names the file, the line and the field."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict, field_validator

from infra.yamlfile import YamlDocument, YamlFileError, field_name, load, read_yaml


class Item(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    size: int = 1

    @field_validator("size")
    @classmethod
    def _positive(cls, size: int) -> int:
        if size <= 0:
            raise ValueError("must be positive")
        return size


class Shelf(BaseModel):
    model_config = ConfigDict(extra="forbid")

    title: str
    items: list[Item]
    by_id: dict[str, Item] = {}


GOOD = """\
# a comment
title: shelf
items:
  - name: a
  - name: b
    size: 2
by_id:
  x:
    name: c
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "shelf.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_file_is_what_safe_load_gives(tmp_path: Path) -> None:
    shelf = load(Shelf, write(tmp_path, GOOD))
    assert [item.name for item in shelf.items] == ["a", "b"] and shelf.by_id["x"].name == "c"


@pytest.mark.parametrize(("old", "new", "line", "field", "what"), [
    ("    size: 2", "    size: 0", 6, "items[1].size", "must be positive"),
    ("    size: 2", "    sise: 2", 6, "items[1].sise", "unknown field"),
    ("    name: c", "    name: c\n    colour: red", 10, "by_id.x.colour", "unknown field"),
    ("    name: c", "    size: 3", 8, "by_id.x.name", "required"),
    ("    name: c", "    nme: c", 9, "by_id.x.nme", "unknown field (did you mean 'name'?)"),
    ("  - name: a", "  - name: a\n    colour: red", 5, "items[0].colour", "unknown field (a typo?)"),
    ("    name: c", "    name: c\n    size: many", 10, "by_id.x.size", "valid integer"),
    ("title: shelf\n", "", 2, "title", "required"),
    ("  - name: a\n", "  - size: 3\n", 4, "items[0].name", "required"),
])
def test_an_error_names_the_file_the_line_and_the_field(tmp_path: Path, old: str, new: str, line: int,
                                                        field: str, what: str) -> None:
    path = write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(YamlFileError) as caught:
        load(Shelf, path)
    message = str(caught.value)
    assert message.startswith(f"{path}, line {line}: {field}: "), message
    assert what in message and ";" not in message  # one problem, one message


def test_the_caller_chooses_the_error_type_and_the_name_of_the_file(tmp_path: Path) -> None:
    class ShelfError(ValueError):
        pass

    with pytest.raises(ShelfError, match=r"^data/shelf\.yaml, line 3: items: "):
        load(Shelf, write(tmp_path, GOOD.replace("items:\n", "items: 7\nxitems:\n")), ShelfError,
             source="data/shelf.yaml")


def test_a_syntax_error_names_its_line(tmp_path: Path) -> None:
    with pytest.raises(YamlFileError, match=r"shelf\.yaml, line 4: not valid YAML"):
        read_yaml(write(tmp_path, "title: a\nitems:\n  - name: a\n  name: [\n"))


def test_several_problems_share_one_message(tmp_path: Path) -> None:
    text = GOOD.replace("  - name: a", "  - name: a\n    size: -1").replace("    size: 2", "    size: -2")
    with pytest.raises(YamlFileError) as caught:
        load(Shelf, write(tmp_path, text))
    assert str(caught.value).count("must be positive") == 2 and "line 5: items[0].size" in str(caught.value)


def test_lines_and_fields_without_a_file() -> None:
    document = YamlDocument("shelf", {"title": 1})
    assert document.line(("title",)) is None and document.where(("title",)) == "shelf: title"
    assert field_name(("cases", 3, "expect")) == "cases[3].expect"
    assert field_name(("terms", "dya", "[key]")) == "terms.dya (key)"


def test_an_empty_file_is_none(tmp_path: Path) -> None:
    assert read_yaml(write(tmp_path, "# nothing\n")).data is None


def test_a_key_twice_in_one_mapping_is_refused_not_silently_dropped(tmp_path: Path) -> None:
    text = GOOD.replace("    size: 2\n", "    size: 2\n    size: 3\n")
    with pytest.raises(YamlFileError, match=r"shelf\.yaml, line 7: duplicate key 'size' \(first at line 6\)"):
        read_yaml(write(tmp_path, text))
    with pytest.raises(YamlFileError, match=r"line 1: duplicate key 'x' \(first at line 1\)"):
        read_yaml(write(tmp_path, "a: {x: 1, x: 2}\n"))
    # the same key in two mappings, and anchors with merge keys, are fine
    text = "a: &base {x: 1}\nb:\n  <<: *base\n  x: 2\nc: {x: 3}\n"
    assert read_yaml(write(tmp_path, text)).data == {"a": {"x": 1}, "b": {"x": 2}, "c": {"x": 3}}
