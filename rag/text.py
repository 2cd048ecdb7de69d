"""Text normalisation shared by every retrieval method: Russian lemmas, English stems, name keys."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import threading
from importlib.metadata import version
from pathlib import Path

import pymorphy3
import Stemmer

from infra.files import write_atomically

MAX_QUERY_CHARS = 500  # longer input is cut: a glossary question never needs more, and cost stays bounded
_WORD = re.compile(r"[a-zа-я0-9]+(?:[.+][a-zа-я0-9]+)*")
_CYRILLIC = re.compile(r"[а-я]")

# Words that carry no meaning for a glossary lookup: question frames and function words. They are
# dropped from BM25 tokens and from the "content" used by the in-scope gate, never from name matching.
STOPWORDS = frozenset([
    "a", "an", "the", "of", "in", "on", "at", "to", "for", "from", "by", "with", "about", "into", "as",
    "and", "or", "not", "no", "is", "are", "was", "were", "be", "been", "being", "do", "does", "did",
    "what", "whats", "which", "who", "whom", "how", "why", "when", "where", "this", "that", "these",
    "those", "it", "its", "my", "me", "i", "you", "your", "we", "our", "explain", "define", "definition",
    "meaning", "mean", "means", "tell", "describe", "please", "give", "can", "could", "would", "should",
    "vs", "versus", "there", "their", "them", "they", "he", "she", "his", "her", "use", "used", "using",
    "work", "works", "и", "или", "не", "ни", "в", "во", "на", "с", "со", "к", "ко", "по", "о", "об", "от",
    "до", "из", "у", "за", "для", "при", "про", "над", "под", "без", "что", "чем", "это", "эта", "этот",
    "эти", "такое", "такой", "такая", "такие", "как", "какой", "какая", "какие", "каков", "зачем", "почему",
    "когда", "где", "кто", "чего", "чему", "чём", "ли", "же", "бы", "ну", "мне", "меня", "нам", "нас", "вы",
    "вам", "ваш", "мой", "моя", "я", "ты", "он", "она", "оно", "они", "его", "её", "их", "быть", "есть",
    "являться", "означать", "значить", "объяснить", "объясни", "расскажи", "рассказать", "сказать", "скажи",
    "описать", "опиши", "дать", "дай", "нужный", "нужен", "нужна", "нужно", "использоваться",
    "использовать", "применяться", "работать", "разница", "отличие", "отличаться", "термин", "слово",
    "сколько", "который", "можно", "мочь", "весь", "каждый", "свой", "очень", "так", "там", "тут", "через",
    "между", "чтобы", "если", "называться", "much", "many", "have", "has", "had", "get", "got", "any",
    "some", "same", "other", "than", "then", "also", "just", "only", "more", "most", "very"
])

# A small bilingual thesaurus: the glossary mixes Russian and English for the same notions, and users
# mix them in questions, so these lemmas/stems are indexed and queried under one canonical token.
CANONICAL = {
    "видеокарта": "gpu", "гпу": "gpu", "карта": "gpu", "gpus": "gpu", "видеопамять": "vram", "врам": "vram",
    "гигабайт": "гб", "gb": "гб", "гигабайта": "гб", "gib": "гб", "token": "токен", "модель": "model",
    "обучение": "train", "тренировка": "train", "обучить": "train", "обучать": "train",
    "изображение": "imag", "картинка": "imag", "image": "imag", "picture": "imag", "текст": "text",
    "речь": "speech", "голос": "voic", "память": "memori", "вес": "weight", "слой": "layer",
    "запрос": "request", "генерация": "generat", "generation": "generat", "generate": "generat",
    "кэш": "cach", "кеш": "cach", "cache": "cach", "внимание": "attent", "квантизация": "quantiz",
    "квантование": "quantiz", "quantization": "quantiz", "inference": "infer", "инференс": "infer",
    "градиент": "gradient", "параметр": "paramet", "parameter": "paramet", "датасет": "dataset",
    "сервер": "server", "контейнер": "contain", "container": "contain", "поиск": "search",
    "аудио": "audio", "видео": "video", "тензор": "tensor", "точность": "precis", "precision": "precis",
    "задержка": "latenc", "латентность": "latenc", "latency": "latenc", "эмбеддинг": "embed",
    "embedding": "embed", "промпт": "prompt", "облако": "cloud", "облачный": "cloud",
}

_morph_lock = threading.Lock()
_morph: pymorphy3.MorphAnalyzer | None = None
_stemmer = Stemmer.Stemmer("english")


def _analyzer() -> pymorphy3.MorphAnalyzer:
    global _morph
    with _morph_lock:
        if _morph is None:
            _morph = pymorphy3.MorphAnalyzer(lang="ru")
        return _morph


def is_russian_word(word: str) -> bool:
    """A word of the Russian dictionary in any form («серверами»); slang and typos are not («видюха»)."""
    return bool(_analyzer().word_is_known(word.lower()))


def fold(text: str) -> str:
    """Lower case, ё→е, and a bounded length: the form every comparison works on."""
    return text[:MAX_QUERY_CHARS * 20].lower().replace("ё", "е")


def words(text: str) -> list[str]:
    """Surface words (letters/digits, keeping inner dots and pluses as in "llama.cpp", "c++")."""
    return _WORD.findall(fold(text))


# word → lemma, computed here or by an earlier process (:func:`load_lemma_table`); bounded like a cache
_LEMMAS: dict[str, str] = {}
MAX_LEMMAS = 200_000


def lemma(word: str) -> str:
    """Russian words → pymorphy3 normal form; Latin words → Snowball English stem; numbers as is."""
    known = _LEMMAS.get(word)
    if known is None:
        if len(_LEMMAS) >= MAX_LEMMAS:
            _LEMMAS.clear()
        known = _LEMMAS[word] = _lemma(word)
    return known


def lemma_count() -> int:
    """How many lemmas are known (computed or loaded) so far."""
    return len(_LEMMAS)


def load_lemma_table(path: Path) -> int:
    """Lemmas an earlier process kept in ``path`` (:func:`save_lemma_table`), when made by the same analyzer
    and canonical forms; returns how many were taken. A cold pymorphy3 parse of a glossary's ~3k words is
    most of a fresh process's index build."""
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    if not isinstance(stored, dict) or stored.get("made_by") != _lemma_table_id():
        return 0
    table = stored.get("lemmas")
    if not isinstance(table, dict) or len(_LEMMAS) + len(table) >= MAX_LEMMAS:
        return 0
    _LEMMAS.update({str(word): str(base) for word, base in table.items()})
    return len(table)


def save_lemma_table(path: Path) -> None:
    """The lemmas computed so far, for the next start (written whole, then renamed; a failure only loses
    the shortcut)."""
    table = json.dumps({"made_by": _lemma_table_id(), "lemmas": _LEMMAS}, ensure_ascii=False).encode()
    with contextlib.suppress(OSError):
        write_atomically(path, lambda out: out.write(table))


def _lemma_table_id() -> str:
    canonical = hashlib.sha256(repr(sorted(CANONICAL.items())).encode()).hexdigest()[:16]
    return f"pymorphy3 {version('pymorphy3')}, PyStemmer {version('PyStemmer')}, canonical {canonical}"


def _lemma(word: str) -> str:
    if _CYRILLIC.search(word):
        base = str(_analyzer().parse(word)[0].normal_form).replace("ё", "е")
    elif word.isdigit():
        return word
    else:
        base = str(_stemmer.stemWord(word))
    return CANONICAL.get(base, base)


def content_lemmas(text: str) -> list[str]:
    """Lemmas without stopwords: what BM25 indexes and what the gate measures coverage on."""
    result = []
    for w in words(text):
        if w in STOPWORDS:
            continue
        lem = lemma(w)
        if lem not in STOPWORDS:
            result.append(lem)
    return result


def compact(text: str) -> str:
    """Name key: letters and digits only, so "KV-кэш", "kv кэш" and "KVкэш" compare equal."""
    return "".join(ch for ch in fold(text) if ch.isalnum())


def latin_share(text: str) -> float:
    """Share of the letters that are Latin: how far an English-only embedder can be trusted."""
    letters = [ch for ch in fold(text) if ch.isalpha()]
    return sum("a" <= ch <= "z" for ch in letters) / len(letters) if letters else 0.0


def has_meaningful_text(text: str) -> bool:
    return bool(words(text))


# "CUDA out of memory", «вылетает cuda oom»: the name of an error met, not the CUDA platform asked about (its
# definition answers nothing of what to do); the memory that ran out is what such a question is about
_ERROR_NAME = re.compile(r"(?i)\bcuda(?=[\s:_-]+(error[\s:]+)?(out[\s_-]+of[\s_-]+memory|oom)\b)")


def without_error_names(text: str) -> str:
    """The question less the names of errors it quotes, which name no concept asked about."""
    return _ERROR_NAME.sub(" ", text)
