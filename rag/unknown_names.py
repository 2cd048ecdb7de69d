"""Names a question writes that nothing the bot knows contains: «как экспортировать модель в onnx…»,
"what max_norm should i use…", «xgboost или catboost?».

Retrieval always finds a nearest concept, and for a question about a tool the glossary does not have the
nearest is one that shares its other words (ONNX export → «Batch Size», torch.compile → «Gradient
Checkpointing»). Quoted, a definition of another thing reads as the answer: a wrong answer. A Russian
question writes names in Latin letters, so a Latin word in it that neither the glossary (its entries, English
renderings and phrasings) nor the catalogs contain, and that is no misspelling of a word they contain, is a
thing the glossary lacks. An English question is all Latin letters, so there only identifiers (``max_norm``,
``torch.compile``), names with an inner capital (TensorRT) and words English does not have (wordfreq's
frequency list: "trtexec", "xgboost", "optuna") count: its plain words are English, not names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from rapidfuzz import process
from rapidfuzz.distance import DamerauLevenshtein
from wordfreq import zipf_frequency

from rag.glossary import GlossaryEntry
from rag.language import Lang
from rag.text import fold

_WORD = re.compile(r"[a-z][a-z0-9]*(?:[._+&-][a-z0-9]+)*")
_IDENTIFIER = re.compile(r"[a-z][._][a-z]")  # max_norm, torch.compile: code, never an English word
_PARTS = re.compile(r"[-+&]")
_TERM = re.compile(r"\d|[A-Za-z]*[A-Z][A-Za-z]*[A-Z]")  # a digit or two capitals: BF16, LoRA, KV, not "inference"
# a product's name written with an inner capital (TensorRT, LangChain): a name, never an English word
_CAMEL = re.compile(r"(?<![\w.])[A-Za-z]*[a-z][A-Z][A-Za-z]*(?![\w.])")
_ENDINGS = ("s", "es", "ed", "d", "ing", "er", "ers")
# below this, a word is in no English text wordfreq has counted (Zipf scale: 1 = once per billion words):
# "tensorrt", "xgboost", "wandb" are 0, "hackathon" 2.5, "jit" 2.6
ENGLISH_ZIPF_MIN = 1.0
# a name with a version ("yolov8", "resnet50"): its letters say what it is, when there are enough of them
_VERSIONED = re.compile(r"([a-z]{4,})\d[a-z0-9]*")
# Russian written in Latin letters inside an English question ("what is diarizatsiya?"): a word, not a name
_RUSSIAN_IN_LATIN = re.compile(r"(iya|iyu|nie|niya|tsii|ykh|ikh|tsya)$|shch|zh|kh|ts[iy]")
MIN_RARE_LENGTH = 5  # "ddim", "epok": too short to tell a name from a misspelling
TYPO_SIMILARITY = 0.8  # "gradint" is "gradient", "onnx" is nothing
MIN_TYPO_LENGTH = 5


def _words(texts: Iterable[str]) -> set[str]:
    words: set[str] = set()
    for text in texts:
        for word in _WORD.findall(fold(text)):
            words.add(word)
            words.update(part for part in re.split(r"[._+&-]", word) if part)
            if "-" in word:  # "micro-batch" is written "microbatch" too
                words.add(word.replace("-", ""))
    return words


class Vocabulary:
    """The Latin words the bot knows, from the texts it is built on (the glossary's entries are added per
    glossary by :meth:`with_glossary`, so a reloaded glossary's new names are known at once)."""

    def __init__(self, texts: Iterable[str], names: Iterable[str] = ()) -> None:
        self.words = frozenset(_words(texts))
        self._long = sorted(word for word in self.words if len(word) >= MIN_TYPO_LENGTH and word.isalpha())
        self._glossary: tuple[int, Vocabulary] | None = None
        latin = sorted({fold(name) for name in names if _WORD.fullmatch(fold(name))}, key=len, reverse=True)
        self._names = re.compile(r"(?<![\w.])(" + "|".join(map(re.escape, latin)) + r")(?![\w.])") if latin else None

    def with_glossary(self, entries: Sequence[GlossaryEntry]) -> Vocabulary:
        """This vocabulary and the entries' names and definitions (kept for the one glossary last asked)."""
        kept = self._glossary
        if kept is None or kept[0] != id(entries):
            texts = [text for entry in entries for text in (*entry.names, entry.definition)]
            texts += [name.replace(" ", "") for entry in entries for name in entry.names if " " in name]  # microbatch
            kept = (id(entries), Vocabulary([*self.words, *texts], [name for entry in entries
                                                                     for name in entry.names]))
            self._glossary = kept
        return kept[1]

    def knows(self, word: str) -> bool:
        if word in self.words or any(word.endswith(end) and (word[:-len(end)] in self.words
                                                             or word[:-len(end)] + "e" in self.words)
                                     for end in _ENDINGS):
            return True
        if _IDENTIFIER.search(word):
            return False  # an identifier is known whole or not at all (state and dict are words, max_norm is not)
        if _PARTS.search(word):
            return all(self.knows(part) for part in _PARTS.split(word) if part)  # gpu-util, always-on
        if len(word) >= MIN_TYPO_LENGTH and self._long:
            best = process.extractOne(word, self._long, scorer=DamerauLevenshtein.normalized_similarity,
                                      score_cutoff=TYPO_SIMILARITY)
            return best is not None
        return False

    def unknown_names(self, question: str, lang: Lang) -> list[str]:
        """The question's names this vocabulary lacks, in order (none for an English question's plain words).
        None either when the question also names a concept of the glossary in Latin letters ("llama" beside
        "bf16" is the context of a question about BF16); in an English question, by a name written as a term
        (BF16, LoRA, KV cache), since "inference" or "model" there are plain English words."""
        if self._names is not None and any(lang != "en" or _TERM.search(question[found.start():found.end()])
                                           for found in self._names.finditer(fold(question))):
            return []
        found: list[str] = []
        camel = {fold(word) for word in _CAMEL.findall(question)}
        for word in _WORD.findall(fold(question)):
            if len(word) < 3 or word in found:
                continue
            if any(ch.isdigit() for ch in word):
                # h100, 7b, sm_90, fp8: catalog names and versions, read by the slots; "yolov8" is a name
                versioned = _VERSIONED.fullmatch(word)
                if versioned is not None and not self.knows(versioned.group(1)) \
                        and zipf_frequency(versioned.group(1), "en") < ENGLISH_ZIPF_MIN:
                    found.append(word)
                continue
            if lang == "en" and not _IDENTIFIER.search(word) and word not in camel and (
                    len(word) < MIN_RARE_LENGTH or _RUSSIAN_IN_LATIN.search(word)
                    or zipf_frequency(word, "en") >= ENGLISH_ZIPF_MIN):
                continue
            if not self.knows(word):
                found.append(word)
        return found
