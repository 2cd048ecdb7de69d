"""User-facing text in Russian and English: one catalog, loaded from ``messages/*.yaml``.

The domain never writes prose for users: it returns data, and where it has something to say (a fit note,
a quote rule, an input error) a :class:`Phrase` — a catalog key with its parameters. The fronts render
phrases in the user's language with :func:`t` / :func:`render`. The catalog is YAML files by area (one
file per feature, so features do not collide in one file); a key defined twice is an error at import,
and a test checks that every key has both languages with the same placeholders.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, RootModel, model_validator

from infra.yamlfile import Text, read_yaml, validate

Lang = Literal["ru", "en"]
LANGS: tuple[Lang, ...] = get_args(Lang)
DEFAULT_LANG: Lang = "ru"
MESSAGES_DIR = Path(__file__).resolve().parent / "messages"


class CatalogError(ValueError):
    """A message file is malformed: a key twice, a language missing, a value that is not text."""


class _Texts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ru: str
    en: str

    @model_validator(mode="before")
    @classmethod
    def _both_languages(cls, texts: Any) -> Any:
        if not isinstance(texts, dict) or set(texts) != set(LANGS):
            raise ValueError(f"needs exactly the texts {', '.join(LANGS)}")
        return texts


_MessageFile = RootModel[dict[Text, _Texts]]


def load_catalog(directory: Path = MESSAGES_DIR) -> dict[str, dict[Lang, str]]:
    """Every ``*.yaml`` of ``directory``; a malformed file raises :class:`CatalogError` naming the file, the
    line and the key."""
    catalog: dict[str, dict[Lang, str]] = {}
    origin: dict[str, str] = {}
    for path in sorted(directory.glob("*.yaml")):
        document = read_yaml(path, CatalogError, source=path.name)
        if document.data is None:
            continue
        if not isinstance(document.data, dict):
            raise CatalogError(f"{path.name}: expected a mapping of keys to {{ru, en}}")
        for key, texts in validate(_MessageFile, document, CatalogError).root.items():
            if key in catalog:
                raise CatalogError(f"{document.where((key,))}: already defined in {origin[key]}")
            catalog[key] = {"ru": texts.ru, "en": texts.en}
            origin[key] = path.name
    return catalog


MESSAGES: dict[str, dict[Lang, str]] = load_catalog()


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def pick_lang(language_code: str | None) -> Lang:
    """Russian for ru/uk/be/kk speakers, English for everyone else; Russian when Telegram says nothing."""
    if not language_code:
        return DEFAULT_LANG
    base = language_code.split("-")[0].lower()
    return "ru" if base in {"ru", "uk", "be", "kk"} else "en"


def t(key: str, lang: Lang, /, **params: object) -> str:
    text = MESSAGES[key][lang]
    return text.format(**params) if params else text


def has(key: str) -> bool:
    return key in MESSAGES


@dataclass(frozen=True)
class Phrase:
    """Something the domain has to say, as a catalog key and its parameters (rendered by the fronts)."""

    key: str
    params: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, message_key: str, /, **params: Any) -> Phrase:
        return cls(message_key, params)

    def render(self, lang: Lang) -> str:
        return t(self.key, lang, **self.params)

    def to_json(self) -> dict[str, Any]:
        return {"code": self.key, "params": {k: v if isinstance(v, int | float | str | bool) or v is None
                                             else str(v) for k, v in self.params.items()}}


def render(phrase: Phrase, lang: Lang) -> str:
    return phrase.render(lang)
