"""The two answer languages and how a text's language is told: the one place for it in the domain.

:func:`detect_lang` decides the language of a question (and so of its answer); :func:`prevailing_lang` the
language of a generated sentence (verification reads an English sentence against the curated English).
"""

from __future__ import annotations

import re
from typing import Literal

Lang = Literal["ru", "en"]

_CYRILLIC = re.compile(r"[А-Яа-яЁё]")
_LATIN = re.compile(r"[A-Za-z]")


def _letter_counts(text: str) -> tuple[int, int]:
    """Cyrillic and Latin letters in ``text``."""
    return len(_CYRILLIC.findall(text)), len(_LATIN.findall(text))


def detect_lang(text: str) -> Lang:
    """Russian when Cyrillic letters make up a fair share of the letters, English otherwise."""
    cyrillic, latin = _letter_counts(text)
    if cyrillic == 0:
        return "en"
    return "ru" if cyrillic >= 0.3 * (cyrillic + latin) or cyrillic >= 4 else "en"


def prevailing_lang(sentence: str) -> Lang:
    """The language most of a sentence's letters are in. :func:`detect_lang` is made for short questions,
    where four Cyrillic letters decide; a model's English sentence with one half-translated word
    ("stores the KV cache in non-smежных blocks") is still English."""
    cyrillic, latin = _letter_counts(sentence)
    return "ru" if cyrillic > latin else "en"
