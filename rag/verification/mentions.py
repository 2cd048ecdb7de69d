"""Which glossary concepts a text names, across the whole glossary (not only an answer's context).

The verifier needs this to judge a sentence's subject: "Для BF16 требуется loss scaling [1]" citing FP16's
entry is about BF16, a concept the context may not hold at all. Only names that are unmistakably terms count
as naming a concept: acronyms and mixed-case or digit-bearing spellings (DDP, LoRA, H100, ZeRO-3), names of
several words (Tensor Parallelism, KV-кэш, контрольная точка обучения) and long single Russian terms
(квантование). Plain words that double as terms ("token", "loss", «эпоха», «миг», «куда») are left out:
they would make every sentence "name" a concept it merely uses.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from rag.glossary import GlossaryEntry
from rag.text import compact, lemma, words

MAX_NAME_WORDS = 6
MIN_RUSSIAN_TERM_CHARS = 7  # «квантование», «чекпоинт»; not «батч», «токен», «эпоха»
_LATIN_OR_DIGIT = re.compile(r"[A-Za-z0-9]")
_CYRILLIC = re.compile(r"[А-Яа-яЁё]")
# single Russian words that are glossary names but everyday words in an answer
_COMMON_RUSSIAN = frozenset({"модель", "память", "обучение", "генерация", "параметр", "градиент", "токены",
                             "тензор", "тензоры", "потери", "внимание", "задержка", "контекст", "температура",
                             "производительность", "видеокарта", "видеопамять", "контейнер", "инстанс",
                             "эксперт", "прогрев", "нормализация", "нормировка", "нелинейность", "оркестрация",
                             "переобучение", "дообучение", "предобучение", "стриминг", "латентность"})
# the hardware every answer talks about: naming it does not make it a sentence's subject
_GENERIC = frozenset({"gpu", "gpus", "vram", "cpu", "llm", "ai", "ml"})


def is_term_like(name: str) -> bool:
    """A spelling that names a concept wherever it appears (see the module docstring)."""
    name_words = words(name)
    if not name_words or len(compact(name)) < 3 or compact(name) in _GENERIC:
        return False
    if len(name_words) > 1:
        return True
    if _LATIN_OR_DIGIT.search(name) and not _CYRILLIC.search(name):
        letters = [ch for ch in name if ch.isalpha()]
        upper = sum(ch.isupper() for ch in letters)
        return any(ch.isdigit() for ch in name) or upper >= 2 or (0 < upper < len(letters) and not name[0].isupper())
    return bool(_CYRILLIC.search(name)) and len(name_words[0]) >= MIN_RUSSIAN_TERM_CHARS and (
        name_words[0] not in _COMMON_RUSSIAN)


class ConceptNames:
    """Word n-grams of term-like names → concepts, matched by spelling or by lemmas, longest first."""

    def __init__(self, entries: Sequence[GlossaryEntry]) -> None:
        self._surface: dict[str, set[str]] = {}
        self._lemmas: dict[str, set[str]] = {}
        self._keys: dict[str, set[str]] = {}  # concept → compact keys of all its names (for mentions)
        self._latin: set[str] = set()  # the surface and lemma keys of names written in Latin letters
        self._whole: dict[str, set[str]] = {}  # surface and lemma keys of every name, term-like or not
        # a concept one of whose names is generic (VRAM, GPU) is generic under every name ("GPU memory")
        generic = {entry.concept for entry in entries if any(compact(name) in _GENERIC for name in entry.names)}
        for entry in entries:
            keys = self._keys.setdefault(entry.concept, set())
            for name in entry.names:
                key = compact(name)
                name_words = words(name)
                lemmas = " ".join(lemma(w) for w in name_words)
                if len(key) >= 3:
                    keys.add(key)
                    for whole in (key, lemmas):
                        self._whole.setdefault(whole, set()).add(entry.concept)
                if entry.concept in generic or not is_term_like(name):
                    continue
                surface = compact("".join(name_words))
                self._surface.setdefault(surface, set()).add(entry.concept)
                self._lemmas.setdefault(lemmas, set()).add(entry.concept)
                if not _CYRILLIC.search(name):
                    self._latin |= {surface, lemmas}

    def named(self, text: str) -> set[str]:
        """The concepts whose term-like names the text contains as whole words; a name inside a longer
        matched name ("LoRA" in "LoRA для Stable Diffusion") does not count separately."""
        return set(self.in_order(text))

    def in_order(self, text: str, latin_only: bool = False) -> list[str]:
        """:meth:`named`, in the order the text names them; ``latin_only``: by names in Latin letters alone
        (BF16, LoRA, Tensor Parallelism: the surest evidence, where «инференс» may only set the scene)."""
        text_words = words(text)
        covered: set[int] = set()
        found: dict[str, int] = {}
        for n in range(min(MAX_NAME_WORDS, len(text_words)), 0, -1):
            for start in range(len(text_words) - n + 1):
                span = set(range(start, start + n))
                if span & covered:
                    continue
                gram = text_words[start:start + n]
                surface, lemmas = compact("".join(gram)), " ".join(lemma(w) for w in gram)
                if latin_only and surface not in self._latin and lemmas not in self._latin:
                    continue
                concepts = self._surface.get(surface) or self._lemmas.get(lemmas)
                if concepts:
                    for concept in sorted(concepts):
                        found[concept] = min(found.get(concept, start), start)
                    covered |= span
        return sorted(found, key=lambda concept: found[concept])

    def named_as_a_whole(self, text: str) -> set[str]:
        """The concepts one of whose names the text is, as a whole, plain words included: what «Токен — это …»
        defines is the Token, though "токен" in a sentence names nothing (see the module docstring)."""
        return self._whole.get(compact(text), set()) | self._whole.get(" ".join(lemma(w) for w in words(text)),
                                                                        set())

    def is_name_of(self, concept: str, text: str) -> bool:
        """Whether the text is, as a whole, one of the concept's names ("Container", not "a container image")."""
        return compact(text) in self._keys.get(concept, ())

    def mentioned(self, concept: str, text: str) -> bool:
        """Whether the text spells any name of the concept (term-like or not), e.g. an entry that talks
        about another concept ("FSDP … аналог ZeRO-3")."""
        key = compact(text)
        return any(name in key for name in self._keys.get(concept, ()))


def holds_part(longer: Sequence[str], part: Sequence[str]) -> bool:
    """``part`` is a shorter run of ``longer``'s words, in order (Token of Tokens per Second, Attention of Flash
    Attention): the other concept a name's part names."""
    size = len(part)
    return 0 < size < len(longer) and any(tuple(longer[i:i + size]) == tuple(part)
                                          for i in range(len(longer) - size + 1))


@functools.lru_cache(maxsize=4)
def concept_names(entries: tuple[GlossaryEntry, ...]) -> ConceptNames:
    """One index per glossary version (entries are frozen, so the tuple is its identity)."""
    return ConceptNames(entries)
