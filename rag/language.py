"""The two answer languages, how a text's language is told, and the kinds of question verification must know.

:func:`detect_lang` decides the language of a question (and so of its answer); :func:`prevailing_lang` the
language of a generated sentence (verification reads an English sentence against the curated English).
:func:`is_yes_no_question` and :func:`is_why_question`: a question whose answer must take a side (yes or no)
or state a cause, which :mod:`rag.verification.sentences` checks for. The question kinds answering needs
(definition, comparison, follow-up) are :mod:`rag.context`'s.
"""

from __future__ import annotations

import re
from typing import Literal

Lang = Literal["ru", "en"]

_CYRILLIC = re.compile(r"[А-Яа-яЁё]")
_LATIN = re.compile(r"[A-Za-z]")
_YES_NO_QUESTION = re.compile(
    r"(?i)(\bли\b|^\s*(правда|верно|можно|нужно|надо|должен|обязательно)\b|^\s*(is|are|do|does|did|can|could|will|"
    r"would|should|must|has|have|was|were|may)\b)")
# «DDP шардирует параметры модели?»: a Russian question with no question word asks yes or no by intonation
_QUESTION_WORD = re.compile(
    r"(?i)\b(что|чем|ч[её]м|как\w*|зачем|почему|сколько|где|когда|кто|куда|откуда|какой|какая|какое|какие|каков\w*|"
    r"для\s+чего|объясни\w*|расскажи\w*|what|how|why|which|where|when|who|whom|whose|vs|versus|или|or)\b")
_WHY_QUESTION = re.compile(r"(?i)\b(почему|отчего|зачем|с\s+какой\s+стати|why|how\s+come)\b")


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


def is_yes_no_question(question: str) -> bool:
    question = question.strip()
    if _YES_NO_QUESTION.search(question):
        return True
    return question.endswith("?") and bool(_CYRILLIC.search(question)) and not _QUESTION_WORD.search(question)


def is_why_question(question: str) -> bool:
    """The question asks for a cause («почему…», "why…")."""
    return bool(_WHY_QUESTION.search(question))
