"""Mutation testing of the answer verifier: the wrong sentences a small model writes, made from the glossary.

The small answer model writes sentences that cite glossary entries; :mod:`rag.verification.sentences` must
reject the wrong ones and keep the faithful ones. Hand-written cases (tests/rag/verification/test_verification.py)
cover what the model has already written; this module writes, from every sentence of every entry (and of its
curated English rendering), the mistakes such a model makes, class by class, so the verifier can be measured
on all of them:

* wrong: ``comparative_swap`` (больше → меньше, faster → slower), ``negation_flip`` (a «не» / "not" added or
  removed), ``number_change`` (a figure ×2 or +1, another unit, another catalog GPU's memory), ``sibling_swap``
  (the sentence said of a sibling concept: FSDP for DDP, A100 for H100, while citing the original entry),
  ``role_swap`` (two Latin terms of the sentence trade places), ``name_part_swap`` (what the sentence defines
  named by a concept whose name is a part of the entry's, or holds it whole: «Токен — …» from Tokens per
  Second's sentence, "Batch Size is …" from Batch's) and ``degenerate`` («X — это X», the question
  echoed as the answer, one phrase as its own subject and object: "the proposed tokens check the proposed
  tokens");
* faithful: ``verbatim`` (the sentence itself), ``reordered`` (its two clauses around a comma swapped),
  ``shortened`` (its first clause), ``named`` («X — …», "X is …") and ``rendering`` (the English rendering).

Everything here is pure text work (with the retrieval's lemmas): no verifier, no files.
``anchorgpu bench verifier`` runs the verifier on
these mutants, split by entry into a ``tune`` and a ``heldout`` half (:func:`part_of`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Literal

from rag.glossary import GlossaryEntry
from rag.language import Lang
from rag.text import STOPWORDS, lemma
from rag.verification.mentions import holds_part

Part = Literal["tune", "heldout"]
PARTS: tuple[Part, ...] = ("tune", "heldout")
WRONG_CLASSES = ("comparative_swap", "negation_flip", "number_change", "sibling_swap", "role_swap",
                 "name_part_swap", "degenerate")
FAITHFUL_CLASSES = ("verbatim", "reordered", "shortened", "named", "rendering")
MAX_VARIANTS = 3  # per sentence and class: a long sentence must not outweigh the others in a class's share

# Concepts a small model confuses with each other (glossary concept ids). The sentence of one, said of the
# other and still citing the first entry, is the failure the subject checks exist for. Pairs where one is a
# kind or an implementation of the other (FSDP and ZeRO-3, batching and continuous batching) are left out:
# the sentence of one is often true of the other.
SIBLING_CONCEPTS: tuple[tuple[str, str], ...] = (
    ("tensor-parallelism", "pipeline-parallelism"),
    ("ddp", "fsdp"),
    ("lora", "qlora"),
    ("lora", "dreambooth"),
    ("fp16", "bf16"),
    ("fp8", "fp16"),
    ("hbm", "gddr"),
    ("prefill", "decode"),
    ("ttft", "tpot"),
    ("nvidia-h100", "nvidia-a100"),
    ("nvidia-h200", "nvidia-h100"),
    ("nvidia-l40s", "nvidia-rtx-4090"),
    ("amd-mi300x", "nvidia-h100"),
    ("nvlink", "pcie"),
    ("cuda", "rocm"),
    ("cuda-cores", "tensor-core"),
    ("awq", "gptq"),
    ("gguf", "ggml"),
    ("vllm", "tgi"),
    ("sglang", "vllm"),
    ("llama-cpp", "ollama"),
    ("pagedattention", "flash-attention"),
    ("flash-attention", "xformers"),
    ("latency", "throughput"),
    ("sft", "rlhf"),
    ("dpo", "rlhf"),
    ("pre-training", "fine-tuning"),
    ("gradient-accumulation", "gradient-checkpointing"),
    ("batch-size", "micro-batch"),
    ("learning-rate", "weight-decay"),
    ("self-attention", "multi-head-attention"),
    ("gqa", "multi-head-attention"),
    ("sdxl", "flux"),
    ("stable-diffusion", "flux"),
    ("unet", "dit"),
    ("txt2img", "img2img"),
    ("inpainting", "outpainting"),
    ("comfyui", "automatic1111"),
    ("lora-rank", "lora-alpha"),
    ("moe-expert", "moe-router"),
    ("asr", "tts"),
    ("vad", "diarization"),
    ("bm25", "vector-search"),
    ("top-p", "temperature"),
    ("object-storage", "persistent-volume"),
    ("docker-image", "container"),
)


@dataclass(frozen=True)
class Mutant:
    """A sentence about one entry, wrong or faithful; ``text`` is without its citation (see :func:`cited`).
    ``source``: the glossary (or rendering) sentence it was made from; "" for one made from the name alone."""

    entry_id: str
    cls: str
    lang: Lang
    text: str
    wrong: bool
    source: str = ""


# ---------------------------------------------------------------- sentences, questions, parts

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")
# "Что это: …", "What it is: …": a label the glossary's sentences open with, not part of what they say
_LABEL = re.compile(r"^[^:,.;()«»\"]{2,32}:\s+")
_CYRILLIC = re.compile(r"[А-Яа-яЁё]")
_END = re.compile(r"[.!?…]+$")


def sentences(text: str) -> list[str]:
    """The sentences of a definition (or of its rendering), in order."""
    return [part.strip() for part in _SENTENCE_END.split(text) if part.strip()]


def english_name(entry: GlossaryEntry) -> str:
    """The entry's name in an English sentence: its term, or its first Latin alias when the term is Russian."""
    if not _CYRILLIC.search(entry.term):
        return entry.term
    latin = next((alias for alias in entry.aliases if not _CYRILLIC.search(alias)), None)
    return latin[:1].upper() + latin[1:] if latin else entry.term


def name_in(entry: GlossaryEntry, lang: Lang) -> str:
    return entry.term if lang == "ru" else english_name(entry)


def question_for(entry: GlossaryEntry, lang: Lang) -> str:
    """The question the verifier is given for a mutant of this entry."""
    return f"что такое {entry.term}?" if lang == "ru" else f"what is {english_name(entry)}?"


def cited(text: str, number: int = 1) -> str:
    """The sentence as the model writes it: ``[1]`` before its final punctuation."""
    end = _END.search(text)
    body, stop = (text[:end.start()], end.group()) if end else (text, ".")
    return f"{body.rstrip()} [{number}]{stop}"


def part_of(entry_id: str) -> Part:
    """``tune`` or ``heldout``: a fixed hash of the entry id, so every run and machine splits alike."""
    return "tune" if hashlib.sha256(entry_id.encode("utf-8")).digest()[0] % 2 == 0 else "heldout"


def split_entries(entries: Iterable[GlossaryEntry]) -> dict[Part, list[GlossaryEntry]]:
    parts: dict[Part, list[GlossaryEntry]] = {part: [] for part in PARTS}
    for entry in entries:
        parts[part_of(entry.id)].append(entry)
    return parts


# ---------------------------------------------------------------- helpers

def _same_case(original: str, replacement: str) -> str:
    return replacement[:1].upper() + replacement[1:] if original[:1].isupper() else replacement


def _replace_each(sentence: str, matches: Iterable[re.Match[str]], replace: Callable[[re.Match[str]], str | None],
                  ) -> list[str]:
    """One variant per match: that match replaced, the rest of the sentence as it was."""
    variants: list[str] = []
    for match in matches:
        replacement = replace(match)
        if replacement is None:
            continue
        variant = sentence[:match.start()] + replacement + sentence[match.end():]
        if variant != sentence and variant not in variants:
            variants.append(variant)
        if len(variants) >= MAX_VARIANTS:
            break
    return variants


def _is_term_like(word: str) -> bool:
    """A name, not a word: two capitals (HBM3, PyTorch), letters and digits (H100, img2img), or an inner
    capital (vLLM, cuDNN)."""
    letters = [ch for ch in word if ch.isalpha()]
    if len(word) < 2 or not letters:
        return False
    upper = sum(ch.isupper() for ch in letters)
    return upper >= 2 or any(ch.isdigit() for ch in word) or (upper >= 1 and not word[0].isupper())


def _lower_first(text: str) -> str:
    """A sentence made the tail of another: its first letter lowered unless its first word is a name."""
    first = text.split(maxsplit=1)[0] if text.strip() else ""
    return text if _is_term_like(first.strip("«»\"(),.")) else text[:1].lower() + text[1:]


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def _without_label(sentence: str) -> tuple[str, str]:
    match = _LABEL.match(sentence)
    return (match.group(), sentence[match.end():]) if match else ("", sentence)


# ---------------------------------------------------------------- wrong: comparatives

# whole words, both directions; the first letter's case is kept
_RU_OPPOSITES = (("больше", "меньше"), ("выше", "ниже"), ("быстрее", "медленнее"), ("лучше", "хуже"),
                 ("дешевле", "дороже"), ("сильнее", "слабее"), ("чаще", "реже"), ("раньше", "позже"))
# stems, both directions, the ending kept: «увеличивает» → «уменьшает», «снижение» → «повышение»
_RU_STEMS = (("увеличива", "уменьша"), ("увелич", "уменьш"), ("ускор", "замедл"), ("снижа", "повыша"),
             ("сниже", "повыше"), ("сниз", "повыс"), ("быстр", "медленн"), ("высок", "низк"),
             ("максимальн", "минимальн"), ("больш", "меньш"))
# not the stems above, though they start with them: an accelerator, fast-acting
_RU_NOT_STEMS = re.compile(r"(?i)^(ускорител|быстродейств|большинств|меньшинств)")
_EN_OPPOSITES = (("more", "less"), ("larger", "smaller"), ("faster", "slower"), ("higher", "lower"),
                 ("better", "worse"), ("high", "low"), ("large", "small"), ("increase", "reduce"),
                 ("increases", "reduces"), ("increased", "reduced"), ("increasing", "reducing"),
                 ("speeds up", "slows down"), ("speed up", "slow down"), ("maximum", "minimum"),
                 ("fast", "slow"))
_EN_ONE_WAY = (("bigger", "smaller"), ("greater", "smaller"), ("fewer", "more"), ("cheaper", "more expensive"),
               ("decrease", "increase"), ("decreases", "increases"), ("reduction", "increase"),
               ("lowers", "raises"), ("accelerates", "slows down"), ("accelerate", "slow down"))


def _word_table(pairs: Sequence[tuple[str, str]], one_way: Sequence[tuple[str, str]] = ()) -> dict[str, str]:
    table = {a: b for a, b in pairs} | {b: a for a, b in pairs}
    return table | dict(one_way)


_RU_WORDS = _word_table(_RU_OPPOSITES)
_EN_WORDS = _word_table(_EN_OPPOSITES, _EN_ONE_WAY)
_RU_STEM_TABLE = _word_table(_RU_STEMS)


def _words_pattern(words: Iterable[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?i)(?<![\w-])(?:{alternatives})(?![\w-])")


_RU_WORD = _words_pattern(_RU_WORDS)
_EN_WORD = _words_pattern(_EN_WORDS)
_RU_STEM = re.compile(r"(?i)(?<![\w-])(" + "|".join(sorted(_RU_STEM_TABLE, key=len, reverse=True)) + r")(\w*)")


def comparative_swap(sentence: str, lang: Lang) -> list[str]:
    """A comparison turned over: «больше памяти» → «меньше памяти», "increases the size" → "reduces the size"."""
    if lang == "en":
        return _replace_each(sentence, _EN_WORD.finditer(sentence),
                             lambda m: _same_case(m.group(), _EN_WORDS[m.group().lower()]))

    def replace(match: re.Match[str]) -> str | None:
        word = match.group()
        if word.lower() in _RU_WORDS:
            return _same_case(word, _RU_WORDS[word.lower()])
        if _RU_NOT_STEMS.match(word):
            return None
        stem = _RU_STEM.match(word)
        assert stem is not None
        return _same_case(word, _RU_STEM_TABLE[stem.group(1).lower()] + stem.group(2))

    matches: dict[int, re.Match[str]] = {}
    for match in [*_RU_WORD.finditer(sentence), *_RU_STEM.finditer(sentence)]:
        matches.setdefault(match.start(), match)  # a whole word and a stem at one place: the word
    return _replace_each(sentence, [matches[start] for start in sorted(matches)], replace)


# ---------------------------------------------------------------- wrong: negation

_RU_NOT = re.compile(r"(?i)(?<![\w-])не\s+(?!только\b)")
_RU_NEGATED_WORDS = {"нельзя": "можно", "невозможно": "возможно"}
_RU_NEGATED = _words_pattern(_RU_NEGATED_WORDS)
# the third person of a verb (поддерживает, хранит, является, может) or a participle (определяющий,
# поддерживаемые): where a small model puts a «не»
_RU_VERB = re.compile(r"(?i)(?<![\w-])[а-яё]{2,}(?:(?:а|я|е|у|ю)?ет(?:ся)?|(?:и|я|а|у|ю)т(?:ся)?|ется|ются|"
                      r"(?:ющ|ящ|ащ|ущ|[аяую]ем|им)(?:ий|ая|ее|ие|их|им|ую|его|ей|ими|ый|ое|ые|ых|ой))(?![\w-])")
# nouns and other words with a verb's ending
_RU_NOT_VERBS = frozenset({
    "нет", "бит", "лимит", "кредит", "объект", "ответ", "пакет", "бюджет", "датасет", "сет", "предмет", "интернет",
    "формат", "результат", "аппарат", "кандидат", "сертификат", "чат", "агрегат", "маршрут", "атрибут", "институт",
    "минут", "секрет", "сюжет", "совет", "свет", "депозит", "юнит", "ключей", "всех", "ядер", "затем", "зачем",
    "будет", "снапшот", "инструкций", "систем", "дисплей", "хранилищ", "ит", "спот", "суперпозиций",
    "таймкод", "таймкодов", "тем", "чем", "всем", "каждым", "которым", "своим", "одним", "этим", "ним", "им",
    "другим", "большим", "малым", "новым", "тип", "вариант", "момент", "элемент", "фрагмент", "компонент",
    "документ", "сегмент", "процент", "клиент", "градиент", "коэффициент", "эксперимент", "инструмент", "контент",
    "абонент", "патент", "аргумент", "ассистент", "агент", "акцент", "стандарт", "старт", "порт", "эффект",
    "проект", "аспект", "дефект", "контекст", "текст", "сервис", "кэш", "вместе", "ещё", "уже", "тоже", "даже",
    "также", "часть", "опыт", "расчёт", "расчет", "учёт", "учет", "отчёт", "отчет", "счёт", "счет", "полёт",
    "оборот", "поворот", "кадров", "кадр", "лет", "байт", "скрипт", "итераций", "операций", "функций",
    "позиций", "версий", "моделей", "весов", "задач", "ролей", "слоёв", "слоев", "параметров", "запусков",
})


def _ru_verb(match: re.Match[str]) -> bool:
    word = match.group().lower()
    return word not in _RU_NOT_VERBS and len(word) >= 4


# English: an auxiliary takes "not" after it; a participle after a comma takes "not" before it; a verb in
# the third person after "that"/"which"/"it" becomes "does not <verb>"
_EN_AUX = re.compile(r"(?i)(?<![\w-])(is|are|was|were|can|may|must|should|will|would|could|does|do)(?![\w-])"
                     r"(?!\s+not\b)")
# "has" of a perfect tense ("has finally figured out") is no verb of its own
_EN_HAS = re.compile(r"(?i)(?<![\w-])(has|have)(?![\w-])(?!\s+(?:not|been|to|\w+ly\s+\w+|\w+(?:ed|en|wn|ne))\b)")
_EN_PARTICIPLE = re.compile(r",\s+([a-z]{3,}ing)(?![\w-])")
_EN_THIRD_PERSON = re.compile(r"(?i)(?<![\w-])(that|which|who|it)\s+([a-z]{3,}s)(?![\w-])")
_EN_NOT = re.compile(r"(?i)(?<![\w-])(?:not\s+|never\s+)|(?<=\w)n't(?![\w-])")
_EN_NEGATED_WORDS = {"cannot": "can", "without": "with"}
_EN_NEGATED = _words_pattern(_EN_NEGATED_WORDS)


def _base_form(verb: str) -> str:
    lowered = verb.lower()
    if lowered.endswith("ies"):
        return verb[:-3] + "y"
    if lowered.endswith(("sses", "shes", "ches", "xes", "zes", "oes")):
        return verb[:-2]
    return verb[:-1]


def negation_flip(sentence: str, lang: Lang) -> list[str]:
    """A «не» ("not") added before the first verb-like word, and an existing one removed."""
    variants: list[str] = []
    if lang == "ru":
        removed = _RU_NOT.search(sentence)
        if removed:
            rest = sentence[removed.end():]
            variants.append(sentence[:removed.start()] + (_upper_first(rest) if removed.start() == 0 else rest))
        variants += _replace_each(sentence, list(_RU_NEGATED.finditer(sentence))[:1],
                                  lambda m: _same_case(m.group(), _RU_NEGATED_WORDS[m.group().lower()]))
        verb = next((m for m in _RU_VERB.finditer(sentence) if _ru_verb(m)), None)
        if verb is not None and not re.search(r"(?i)(?<![\w-])не\s+$", sentence[:verb.start()]):
            negated = ("Не " + _lower_first(verb.group())) if verb.start() == 0 else "не " + verb.group()
            variants.append(sentence[:verb.start()] + negated + sentence[verb.end():])
    else:
        removed = _EN_NOT.search(sentence)
        if removed:
            variants.append(sentence[:removed.start()] + sentence[removed.end():])
        variants += _replace_each(sentence, list(_EN_NEGATED.finditer(sentence))[:1],
                                  lambda m: _same_case(m.group(), _EN_NEGATED_WORDS[m.group().lower()]))
        variants += _english_negated(sentence)
    return [v for v in dict.fromkeys(variants) if v != sentence][:MAX_VARIANTS]


def _english_negated(sentence: str) -> list[str]:
    found: list[tuple[int, int, str]] = []  # (start, end, replacement): the earliest verb-like place wins
    aux = _EN_AUX.search(sentence)
    if aux:
        word = aux.group(1)
        found.append((aux.start(), aux.end(), "cannot" if word.lower() == "can" else f"{word} not"))
    has = _EN_HAS.search(sentence)
    if has:
        found.append((has.start(), has.end(), _same_case(has.group(1), "does not have" if has.group(1).lower()
                                                         == "has" else "do not have")))
    participle = _EN_PARTICIPLE.search(sentence)
    if participle:
        found.append((participle.start(1), participle.end(1), f"not {participle.group(1)}"))
    third = _EN_THIRD_PERSON.search(sentence)
    if third:
        found.append((third.start(2), third.end(2), f"does not {_base_form(third.group(2))}"))
    if not found:
        return []
    start, end, replacement = min(found)
    return [sentence[:start] + replacement + sentence[end:]]


# ---------------------------------------------------------------- wrong: numbers

# a figure standing alone: not the digits of a name (H100, FP16, sm_90) nor a part of another number
# a figure standing alone: not the digits of a name (H100, FP16, ZeRO-3, sm_90) nor a part of another number;
# thousands grouped by a space in Russian ("680 000") and by a comma in English ("680,000")
_NUMBER: dict[Lang, re.Pattern[str]] = {
    "ru": re.compile(r"(?<![\w.,-])(?:\d{1,3}(?:[ \u00a0\u202f]\d{3})+|\d+(?:,\d+)?)(?![\d])(?![.,]\d)"),
    "en": re.compile(r"(?<![\w.,-])(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\d])(?![.,]\d)"),
}
# (unit, the unit a small model writes instead, whether the unit may be a word's start: «8-битный»)
_UNIT_SWAPS: dict[Lang, tuple[tuple[str, str, bool], ...]] = {
    "ru": (("ГБ", "ТБ", False), ("ТБ", "ГБ", False), ("МБ", "ГБ", False), ("мс", "с", False),
           ("бит", "байт", True), ("дней", "недель", False), ("дня", "недели", False), ("часов", "минут", False),
           ("часа", "минуты", False), ("млрд", "млн", False), ("млн", "млрд", False)),
    "en": (("GB", "MB", False), ("TB", "GB", False), ("MB", "GB", False), ("ms", "s", False),
           ("bit", "byte", True), ("days", "weeks", False), ("hours", "minutes", False),
           ("billion", "million", False), ("million", "billion", False)),
}
_MEMORY_UNIT = {"ru": "ГБ", "en": "GB"}


def _decimal(text: str, lang: Lang) -> Decimal | None:
    digits = re.sub(r"[ \u00a0\u202f]", "", text)
    digits = digits.replace(",", ".") if lang == "ru" else digits.replace(",", "")
    try:
        return Decimal(digits)
    except InvalidOperation:
        return None


def _written(value: Decimal, like: str, lang: Lang) -> str:
    """A figure written as ``like`` is: its decimal mark, its thousands grouping."""
    text = format(value.normalize(), "f")
    whole, _, fraction = text.partition(".")
    grouped = re.search(r"\d[ \u00a0\u202f,]\d{3}(?!\d)", like) is not None
    if grouped:
        separator = "," if lang == "en" else like[re.search(r"[ \u00a0\u202f]", like).start()]  # type: ignore[union-attr]
        whole = f"{int(whole):,}".replace(",", separator)
    mark = "," if lang == "ru" else "."
    return whole + (mark + fraction if fraction else "")


def number_change(sentence: str, lang: Lang, memory_figures: Sequence[float] = ()) -> list[str]:
    """A figure changed (×2, +1), its unit changed (ГБ → ТБ, GB → MB), or a memory size replaced by another
    GPU's from the catalog (``memory_figures``: the catalog's memory sizes in GB)."""
    variants: list[str] = []
    for match in list(_NUMBER[lang].finditer(sentence))[:2]:
        value = _decimal(match.group(), lang)
        if value is None:
            continue
        for changed in (value * 2, value + 1):
            variants.append(sentence[:match.start()] + _written(changed, match.group(), lang) + sentence[match.end():])
        after = sentence[match.end():]
        for unit, other, prefix in _UNIT_SWAPS[lang]:
            tail = "" if prefix else r"(?![^\W\d_])"
            unit_match = re.match(rf"\s?-?\s?({re.escape(unit)}){tail}", after)
            if unit_match:
                start = match.end() + unit_match.start(1)
                variants.append(sentence[:start] + other + sentence[start + len(unit):])
                break
        if memory_figures and re.match(rf"\s?{_MEMORY_UNIT[lang]}(?!/)", after):
            others = sorted({f for f in memory_figures if Decimal(str(f)) != value},
                            key=lambda f: (abs(Decimal(str(f)) - value), f))
            if others:
                figure = _written(Decimal(str(others[0])), match.group(), lang)
                variants.append(sentence[:match.start()] + figure + sentence[match.end():])
    return [v for v in dict.fromkeys(variants) if v != sentence][:MAX_VARIANTS * 3]


# ---------------------------------------------------------------- wrong: subjects and roles

def display_name(entries: Sequence[GlossaryEntry]) -> str:
    """How a sentence names a concept: its first entry's acronym in parentheses, else its term (its first
    Latin spelling when the term is Russian)."""
    entry = entries[0]
    acronym = re.search(r"\(([^)]+)\)\s*$", entry.term)
    if acronym:
        return acronym.group(1)
    return english_name(entry)


def sibling_names(entries: Sequence[GlossaryEntry],
                  pairs: Sequence[tuple[str, str]] = SIBLING_CONCEPTS) -> dict[str, list[str]]:
    """Concept → the names of its siblings (``pairs`` both ways), for the concepts the glossary has."""
    by_concept: dict[str, list[GlossaryEntry]] = {}
    for entry in entries:
        by_concept.setdefault(entry.concept, []).append(entry)
    siblings: dict[str, list[str]] = {}
    for a, b in pairs:
        if a in by_concept and b in by_concept:
            siblings.setdefault(a, []).append(display_name(by_concept[b]))
            siblings.setdefault(b, []).append(display_name(by_concept[a]))
    return siblings


def sibling_swap(sentence: str, lang: Lang, own_names: Sequence[str], siblings: Sequence[str],
                 defines: bool = False) -> list[str]:
    """The sentence said of a sibling concept: its own name in it replaced by the sibling's, and, for a
    defining sentence (``defines``), the sibling named as what it defines («FSDP — …», "FSDP is …")."""
    variants: list[str] = []
    names = sorted({name for name in own_names if len(name) >= 2 and not _CYRILLIC.search(name)}, key=len,
                   reverse=True)
    own = re.compile(r"(?i)(?<![\w-])(?:" + "|".join(re.escape(n) for n in names) + r")(?![\w-])") if names else None
    for sibling in siblings[:2]:
        if defines:
            _, body = _without_label(sentence)
            joiner = "—" if lang == "ru" else "is"
            variants.append(f"{sibling} {joiner} {_lower_first(body)}")
        found = own.search(sentence) if own else None
        if found and found.group().lower() != sibling.lower():
            variants.append(sentence[:found.start()] + sibling + sentence[found.end():])
    return [v for v in dict.fromkeys(variants) if v != sentence][:MAX_VARIANTS]


def _name_words(name: str) -> tuple[str, ...]:
    return tuple(lemma(word) for word in re.findall(r"[\w+]+", name.lower()))


def name_part_names(entries: Sequence[GlossaryEntry]) -> dict[str, dict[Lang, list[str]]]:
    """Concept → (per language) the names of the concepts whose name is a part of one of its names, or holds
    one of them whole (Token and Tokens per Second, Batch and Batch Size, Attention and Flash Attention): the
    concepts a small model names instead, the shared word making the sentence look like the entry's."""
    by_concept: dict[str, list[GlossaryEntry]] = {}
    for entry in entries:
        by_concept.setdefault(entry.concept, []).append(entry)
    names = {concept: {_name_words(name) for entry in group for name in entry.names
                       if len(name) >= 3}
             for concept, group in by_concept.items()}
    related: dict[str, dict[Lang, list[str]]] = {}
    for concept, own in names.items():
        for other, theirs in names.items():
            if other == concept or not any(holds_part(a, b) or holds_part(b, a) for a in own for b in theirs):
                continue
            group = by_concept[other]
            by_lang = related.setdefault(concept, {"ru": [], "en": []})
            by_lang["ru"].append(group[0].term)
            by_lang["en"].append(english_name(group[0]))
    return related


def name_part_swap(sentence: str, lang: Lang, others: Sequence[str]) -> list[str]:
    """A defining sentence said of a concept whose name shares a part with the entry's (see
    :func:`name_part_names`), still citing the entry: «Токен — основная метрика скорости инференса…»."""
    return [variant for other in others[:MAX_VARIANTS] for variant in named(sentence, other, lang)]


_LATIN_TOKEN = re.compile(r"(?<![\w.-])[A-Za-z0-9][A-Za-z0-9_.+-]*[A-Za-z0-9+]|(?<![\w.-])[A-Z](?![\w-])")
# two names joined only by these are a list: swapping them says the same ("FP32 и INT32")
_LIST_JOINERS = frozenset({"и", "или", "and", "or", "vs", "versus", "а", "также", "as", "well", "the", "a", "an"})


def role_swap(sentence: str, lang: Lang) -> list[str]:
    """Two Latin names of the sentence trade places (the first pair not merely listed side by side)."""
    tokens = [m for m in _LATIN_TOKEN.finditer(sentence) if _is_term_like(m.group())]
    firsts: list[re.Match[str]] = []
    for token in tokens:  # the first occurrence of each name
        if all(token.group().lower() != seen.group().lower() for seen in firsts):
            firsts.append(token)
    variants: list[str] = []
    for i, a in enumerate(firsts):
        for b in firsts[i + 1:]:
            x, y = a.group().lower(), b.group().lower()
            if x in y or y in x:
                continue
            between = re.findall(r"[^\W\d_]+", sentence[a.end():b.start()].lower())
            if not between or all(word in _LIST_JOINERS for word in between):
                continue
            swapped = (sentence[:a.start()] + b.group() + sentence[a.end():b.start()] + a.group()
                       + sentence[b.end():])
            if swapped != sentence:
                variants.append(swapped)
            break
        if len(variants) >= 2:
            break
    return variants


_PHRASE_WORD = re.compile(r"(?<![\w-])[^\W\d_]{5,}(?![\w-])")


def repeated_role(sentence: str, lang: Lang) -> list[str]:
    """One phrase of the sentence said as its own subject and object ("the proposed tokens check the proposed
    tokens"): a Latin name in the place of the other it acts on, or the sentence's last long word replaced by
    its first."""
    variants: list[str] = []
    tokens = [m for m in _LATIN_TOKEN.finditer(sentence) if _is_term_like(m.group())]
    distinct = [t for i, t in enumerate(tokens) if all(t.group().lower() != u.group().lower() for u in tokens[:i])]
    if len(distinct) >= 2:
        a, b = distinct[0], distinct[1]
        if a.group().lower() not in b.group().lower() and b.group().lower() not in a.group().lower():
            variants.append(sentence[:b.start()] + a.group() + sentence[b.end():])
    # words that say something (not "может", "является"), the two of different meaning («обучаемый» is
    # «тренировка» to the retrieval thesaurus: one for the other is no mistake)
    words = [m for m in _PHRASE_WORD.finditer(sentence)
             if m.group().lower() not in STOPWORDS and lemma(m.group().lower()) not in STOPWORDS]
    if len(words) >= 3 and lemma(words[0].group().lower()) != lemma(words[-1].group().lower()):
        first, last = words[0], words[-1]
        variants.append(sentence[:last.start()] + first.group().lower() + sentence[last.end():])
    return [v for v in dict.fromkeys(variants) if v != sentence][:2]


def degenerate(term: str, lang: Lang) -> list[str]:
    """What a small model writes when it has nothing to say: «X — это X», the question echoed."""
    if lang == "ru":
        return [f"{term} — это {term}.", f"{term} — это {term}, то есть {term}.", f"Что такое {term}?",
                f"Что такое {term}."]
    return [f"{term} is {term}.", f"{term} is a {term}.", f"What is {term}?", f"What is {term}."]


# ---------------------------------------------------------------- faithful

# a clause opening with these leans on another: moved or left alone, it no longer says the same
_DEPENDENT_OPENERS = frozenset({
    "который", "которая", "которое", "которые", "которых", "которым", "которой", "что", "чтобы", "где", "когда",
    "если", "так", "но", "а", "и", "или", "поэтому", "включая", "то", "как", "чем", "особенно", "позволяя",
    "благодаря", "хотя", "однако", "причём", "причем", "в", "из", "с", "от", "по", "для", "при",
    "which", "that", "who", "where", "when", "if", "so", "but", "and", "or", "while", "because", "as", "such",
    "including", "e", "for", "than", "allowing", "making", "especially", "though", "although", "however", "with",
    "from", "to", "in", "of", "by", "i", "depending", "since", "unless", "whereas", "after", "before", "until",
})
# a clause that only places the rest ("на практике", "in practice"): it may stand first or last
_ADVERBIALS = frozenset({"на практике", "как правило", "обычно", "in practice", "as a rule", "usually",
                         "in general", "в целом"})
# a participle that opens a clause and agrees with a subject in the nominative (Russian) / any participle
_RU_NOMINATIVE_PARTICIPLE = re.compile(r"(?i)^[а-яё]+(?:щий|щая|щее|щие|мый|мая|мое|мые|нный|нная|нное|нные|тый|"
                                       r"тая|тое|тые)$")
_EN_PARTICIPLE_WORD = re.compile(r"(?i)^(?:[a-z]+(?:ing|ed)|used|built|made|known|written|run|given|taken)$")
_RU_FINITE = re.compile(r"(?i)(?<![\w-])[а-яё]{2,}(?:(?:а|я|е|у|ю)?ет(?:ся)?|(?:и|я|а|у|ю)т(?:ся)?|ется|ются)"
                        r"(?![\w-])")
_EN_FINITE = re.compile(r"(?i)(?<![\w-])(?:is|are|was|were|can|may|must|should|will|would|could|does|do|has|have)"
                        r"(?![\w-])")


def _has_finite_verb(clause: str, lang: Lang) -> bool:
    if lang == "en":
        return _EN_FINITE.search(clause) is not None
    return any(_ru_verb(match) for match in _RU_FINITE.finditer(clause))


def _ru_gender(word: str) -> str | None:
    """The gender (or plural) a Russian nominative word shows by its ending; None where it shows none."""
    for endings, gender in ((("ый", "ий", "ой"), "m"), (("ая", "яя"), "f"), (("ое", "ее"), "n"), (("ые", "ие"), "p"),
                            (("а", "я"), "f"), (("о", "е"), "n"), (("ы", "и"), "p")):
        if word.endswith(endings):
            return gender
    return "m" if re.search(r"[бвгджзклмнпрстфхцчшщ]$", word) else None


def _stands_alone(first: str, second: str, lang: Lang) -> bool:
    """Whether two comma-separated clauses can trade places and say the same: a participle clause about the
    first clause's subject (with no verb of its own before it), two clauses each with its own verb, or an
    adverbial that only places the rest."""
    opener = second.split()[0].strip(",.").lower()
    if any(second.lower().startswith(adverbial) or first.lower().startswith(adverbial)
           for adverbial in _ADVERBIALS):
        return True
    if opener in _DEPENDENT_OPENERS or re.match(r"[^\w«\"]", second):
        return False
    participle = _EN_PARTICIPLE_WORD if lang == "en" else _RU_NOMINATIVE_PARTICIPLE
    if participle.match(opener):
        if lang == "en" and (len(second.split()) < 4 or re.search(r"(?i)\b(which|that|who|whom|where)\b", first)):
            return False  # "…components, called experts": about the components, not the subject
        # «Агрегация GPU в кластер, обеспечивающий …» speaks of the cluster: the participle must agree with
        # the first clause's subject
        agrees = lang == "en" or _ru_gender(opener) == _ru_gender(first.split()[0].lower())
        return agrees and not _has_finite_verb(first, lang)
    return _has_finite_verb(first, lang) and _has_finite_verb(second, lang)


def _top_level_commas(text: str) -> list[int]:
    """Positions of ", " outside parentheses and quotes, not between digits (1,5)."""
    depth, quoted, found = 0, False, []
    for index, char in enumerate(text):
        if char in "(«":
            depth += 1
        elif char in ")»":
            depth = max(0, depth - 1)
        elif char in "\"“”":
            quoted = not quoted
        elif char == "," and depth == 0 and not quoted and text[index + 1:index + 2] == " ":
            found.append(index)
    return found


def reordered(sentence: str, lang: Lang) -> list[str]:
    """The two clauses around the sentence's only comma, swapped, where each stands on its own (see
    :func:`_stands_alone`); a sentence with a dash, a colon or a semicolon is left alone."""
    label, body = _without_label(sentence)
    end = _END.search(body)
    stop = end.group() if end else "."
    body = body[:end.start()] if end else body
    commas = _top_level_commas(body)
    if len(commas) != 1 or re.search(r"[;:]|\s[—–-]\s", body):
        return []
    first, second = body[:commas[0]].strip(), body[commas[0] + 1:].strip()
    if len(first.split()) < 2 or len(second.split()) < 2 or not _stands_alone(first, second, lang):
        return []
    swapped = f"{second if label else _upper_first(second)}, {_lower_first(first)}{stop}"
    return [label + swapped] if label + swapped != sentence else []


_CLAUSE_END = re.compile(r",\s|;\s|\s[—–]\s|:\s")


def shortened(sentence: str, lang: Lang) -> list[str]:
    """The sentence's first clause, as a sentence of its own: at least three words, not a clause that
    leans on the rest ("Depending on the version, …")."""
    label, body = _without_label(sentence)
    cut = next((m for m in _CLAUSE_END.finditer(body) if m.start() not in _inside_parentheses(body)), None)
    if cut is None:
        return []
    first = body[:cut.start()].strip()
    opener = first.split()[0].strip(",.").lower() if first else ""
    if len(first.split()) < 3 or opener in _DEPENDENT_OPENERS - {"в", "из", "с", "от", "по", "при", "in", "from",
                                                                  "with", "by", "to", "of", "for", "для"}:
        return []
    return [f"{label}{first}."]


def _inside_parentheses(text: str) -> set[int]:
    inside, depth = set(), 0
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif depth:
            inside.add(index)
    return inside


def named(sentence: str, term: str, lang: Lang) -> list[str]:
    """A defining sentence with the entry's name in front: «X — …», "X is …"."""
    _, body = _without_label(sentence)
    if body.lower().startswith(term.lower()):
        return []
    return [f"{term} — {_lower_first(body)}" if lang == "ru" else f"{term} is {_lower_first(body)}"]


# ---------------------------------------------------------------- all of one entry, all of the glossary

def entry_mutants(entry: GlossaryEntry, rendering: str | None = None, siblings: Sequence[str] = (),
                  memory_figures: Sequence[float] = (),
                  name_parts: Mapping[Lang, Sequence[str]] | None = None) -> list[Mutant]:
    """Every wrong and faithful sentence about one entry, in Russian and (from ``rendering``) in English."""
    made: dict[tuple[str, Lang, str], Mutant] = {}
    name_parts = name_parts or {}

    def add(cls: str, lang: Lang, texts: Iterable[str], source: str, copy: bool = False) -> None:
        """``source``: the sentence the texts were made from ("" for none); ``copy``: the texts are it."""
        wrong = cls in WRONG_CLASSES
        for text in texts:
            text = " ".join(text.split())
            if not text or (not copy and text == " ".join(source.split())) or (cls, lang, text) in made:
                continue  # a mutation that changed nothing is no mutant
            if not wrong and not copy and lang == "ru" and not _CYRILLIC.search(text):
                continue  # «Floating Point Operations Per Second.» cut from a Russian sentence is no Russian answer
            made[(cls, lang, text)] = Mutant(entry.id, cls, lang, text, wrong, source)

    texts: list[tuple[Lang, str]] = [("ru", entry.definition)]
    if rendering:
        texts.append(("en", rendering))
    for lang, text in texts:
        term = name_in(entry, lang)
        for index, sentence in enumerate(sentences(text)):
            add("verbatim" if lang == "ru" else "rendering", lang, [sentence], sentence, copy=True)
            add("reordered", lang, reordered(sentence, lang), sentence)
            add("shortened", lang, shortened(sentence, lang), sentence)
            if index == 0 and entry.category != "comparisons":  # «LoRA и DreamBooth — …» defines nothing
                add("named", lang, named(sentence, term, lang), sentence)
            # a label («Что это:», "Why it matters:") is no part of the claim: the mistakes are made after it
            label, body = _without_label(sentence)
            add("comparative_swap", lang, [label + v for v in comparative_swap(body, lang)], sentence)
            add("negation_flip", lang, [label + v for v in negation_flip(body, lang)], sentence)
            add("number_change", lang, [label + v for v in number_change(body, lang, memory_figures)], sentence)
            add("sibling_swap", lang, sibling_swap(sentence, lang, entry.names, siblings, defines=index == 0),
                sentence)
            add("role_swap", lang, [label + v for v in role_swap(body, lang)], sentence)
            if index == 0 and entry.category != "comparisons":
                add("name_part_swap", lang, name_part_swap(sentence, lang, name_parts.get(lang, [])), sentence)
            add("degenerate", lang, [label + v for v in repeated_role(body, lang)], sentence)
        add("degenerate", lang, degenerate(term, lang), "")
    return list(made.values())


def all_mutants(entries: Sequence[GlossaryEntry], renderings: Mapping[str, str] | None = None,
                memory_figures: Sequence[float] = ()) -> list[Mutant]:
    """The mutants of every entry (``renderings``: entry id → its English rendering, where one is current)."""
    siblings = sibling_names(entries)
    parts = name_part_names(entries)
    renderings = renderings or {}
    return [mutant for entry in entries
            for mutant in entry_mutants(entry, renderings.get(entry.id), siblings.get(entry.concept, ()),
                                        memory_figures, parts.get(entry.concept))]
