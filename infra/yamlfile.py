"""YAML data files validated by pydantic models, with errors that name the file, the line and the field.

Every data file an operator or a developer edits (the price list, the catalogs, the rules, the evaluation
sets…) is read by :func:`read_yaml`, which keeps the parsed document's node tree, and validated by
:func:`validate`, which maps each pydantic error's ``loc`` back to the line of that field in the file::

    data/prices.yaml, line 70: gpus.l4.spot: must be positive and not above on_demand

A domain keeps its own error type (``PriceListError``…): :func:`validate` raises the type it is given with
one message holding every problem (``; ``-separated, each with its line and field). Checks that span the
whole file (duplicate ids, ids missing from another file) use :meth:`YamlDocument.where` for the same shape.
A key written twice in one mapping is refused by :func:`read_yaml` (PyYAML would silently keep the last).
"""

from __future__ import annotations

import datetime as dt
import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import yaml
from pydantic import BaseModel, BeforeValidator, ValidationError

M = TypeVar("M", bound=BaseModel)
Loc = Sequence[int | str]

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_PROBLEMS = 5  # listed in one message; the rest are counted


def as_text(value: Any) -> Any:
    """A YAML scalar as the text it was written as (``name: 4090`` is the text "4090", not a number);
    anything else is left for the model to refuse."""
    if isinstance(value, str | int | float | dt.date) and not isinstance(value, bool):
        return str(value)
    return value


Text = Annotated[str, BeforeValidator(as_text)]  # a str field that takes any scalar a YAML editor may write


class YamlFileError(ValueError):
    """A data file that cannot be read, is not YAML, or does not fit its model (when the caller gives no
    error type of its own)."""


@dataclass(frozen=True)
class YamlDocument:
    """A parsed YAML file: its data (what ``yaml.safe_load`` returns) and its node tree, for line numbers."""

    source: str
    data: Any
    root: yaml.Node | None = None

    def line(self, loc: Loc) -> int | None:
        """The 1-based line of the deepest node of ``loc`` in the file (a mapping key's own line; for a
        missing field, the line of the mapping that lacks it); None without a node tree."""
        node = self.root
        if node is None:
            return None
        line = node.start_mark.line + 1
        for part in loc:
            if isinstance(node, yaml.MappingNode):
                for key_node, value_node in node.value:
                    if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(part):
                        line, node = key_node.start_mark.line + 1, value_node
                        break
                else:
                    return line
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
                node = node.value[part]
                line = node.start_mark.line + 1
            else:
                return line
        return line

    def where(self, loc: Loc = ()) -> str:
        """``<file>, line <n>: <field>`` (or less, where there is no line or no field)."""
        line = self.line(loc)
        place = self.source if line is None else f"{self.source}, line {line}"
        field = field_name(loc)
        return f"{place}: {field}" if field else place


def field_name(loc: Loc) -> str:
    """``gpus.l4.spot``, ``cases[3].expect``: the path of a field as an editor of the file reads it."""
    text = ""
    for part in loc:
        if part == "[key]":
            text += " (key)"
        elif isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


_PLAIN = {"missing": "required, but missing", "extra_forbidden": "unknown field (a typo?)"}


def _message(error: Any) -> str:
    if error["type"] in _PLAIN:
        return _PLAIN[error["type"]]
    message = str(error["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        if message.startswith(prefix):
            return message[len(prefix):]
    return message


def _loc(error: Any) -> tuple[int | str, ...]:
    # pydantic adds the name of a function validator or a union member to loc; they are not fields
    return tuple(part for part in error["loc"]
                 if not (isinstance(part, str) and part != "[key]"
                         and (part.startswith("function-") or part.endswith("]"))))


def describe(document: YamlDocument, exc: ValidationError, prefix: Loc = ()) -> str:
    """Every problem of ``exc`` as ``<file>, line <n>: <field>: <what is wrong>``, ``; ``-separated (the
    file named once: ``…; line <m>: <field>: …``).

    A misspelt field is one problem, not two: an unknown field beside a missing one of the same mapping
    reads "unknown field (did you mean '<missing>'?)"."""
    errors = [((*prefix, *_loc(error)), error) for error in exc.errors()]
    missing = {loc: error for loc, error in errors if error["type"] == "missing" and loc}
    renamed: dict[tuple[int | str, ...], str] = {}  # the unknown field's loc -> the missing name it stands for
    taken: set[tuple[int | str, ...]] = set()  # the missing fields so accounted for
    for loc, error in errors:
        if error["type"] != "extra_forbidden" or not loc:
            continue
        siblings = {str(other[-1]): other for other in missing if other[:-1] == loc[:-1] and other not in taken}
        match = difflib.get_close_matches(str(loc[-1]), list(siblings), n=1, cutoff=0.6)
        if match:
            renamed[loc] = match[0]
            taken.add(siblings[match[0]])
    problems: list[str] = []
    for loc, error in errors:
        if loc in taken and error["type"] == "missing":
            continue
        what = f"unknown field (did you mean '{renamed[loc]}'?)" if loc in renamed else _message(error)
        place = document.where(loc)
        if problems and place.startswith(f"{document.source}, "):
            place = place[len(document.source) + 2:]  # the file is named once, at the start
        problems.append(f"{place}: {what}")
    if len(problems) > MAX_PROBLEMS:
        problems = [*problems[:MAX_PROBLEMS], f"and {len(problems) - MAX_PROBLEMS} more"]
    return "; ".join(problems)


def _refuse_duplicate_keys(root: yaml.Node, source: str, error: type[Exception]) -> None:
    """PyYAML keeps the last of two equal keys: in a data file that silently drops a row. Refused instead."""
    stack, visited = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in visited:  # an alias points at a node already seen
            continue
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[tuple[str, str], int] = {}
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                    line, key = key_node.start_mark.line + 1, (key_node.tag, key_node.value)
                    if key in first:
                        raise error(f"{source}, line {line}: duplicate key {key_node.value!r} "
                                    f"(first at line {first[key]})")
                    first[key] = line
                stack.append(value_node)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)


def read_yaml(path: Path, error: type[Exception] = YamlFileError, *, source: str | None = None) -> YamlDocument:
    """Parse ``path`` keeping line numbers. A missing file raises :class:`FileNotFoundError` as is; a file
    that is not YAML, or has a key twice in one mapping, raises ``error`` naming the file and the line."""
    source = str(path) if source is None else source
    text = path.read_text(encoding="utf-8")
    loader = _LOADER(text)
    try:
        root = loader.get_single_node()
        if root is not None:
            _refuse_duplicate_keys(root, source, error)
        data = None if root is None else loader.construct_document(root)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        place = source if mark is None else f"{source}, line {mark.line + 1}"
        raise error(f"{place}: not valid YAML ({exc.problem or exc.context})") from None
    except yaml.YAMLError as exc:
        raise error(f"{source}: not valid YAML ({exc})") from None
    finally:
        loader.dispose()
    return YamlDocument(source, data, root)


def validate(model: type[M], document: YamlDocument, error: type[Exception] = YamlFileError) -> M:
    """``document.data`` as ``model``; ``error`` with every problem, each naming the file, line and field."""
    try:
        return model.model_validate(document.data)
    except ValidationError as exc:
        raise error(describe(document, exc)) from None


def load(model: type[M], path: Path, error: type[Exception] = YamlFileError, *, source: str | None = None) -> M:
    """:func:`read_yaml` then :func:`validate`."""
    return validate(model, read_yaml(path, error, source=source), error)
