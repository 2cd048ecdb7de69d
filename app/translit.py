"""Russian written in Latin letters («chto takoe pereobuchenie modeli?», «skolko stoit arenda h100 na nedelyu»).

A customer on a phone without a Russian layout writes Russian in Latin letters; read as English, the message
is routed by English words it does not have and answered in English. The pipeline reads it as the Russian it
is: :func:`russian_in_latin` tells such a message (Russian function words and endings, not English ones), and
:func:`to_cyrillic` spells it in Cyrillic, leaving names (H100, vLLM, LoRA, 7b) as written. Hand-written, not a
transliteration library's: those implement one standard scheme, and customers mix several (ya/ja, ts/c, y/j,
kh/h), which the rules below accept together.
"""

from __future__ import annotations

import re
from collections.abc import Container, Iterable

# words only Russian has, as customers spell them in Latin letters (none of them an English word)
_RUSSIAN_WORD_LIST = (
    "chto chego chem kak kakoy kakaya kakoe kakie kakih kakuyu takoe takaya takie eto etot eta eti etu etogo "
    "pochemu zachem skolko mozhno nuzhno nuzhen nuzhna nado dlya ili ne est li gde kogda esli chtoby tozhe "
    "ochen luchshe bolshe menshe mne menya nas nam vam vas vy ty ona oni ya kto kuda otkuda pri bez cherez "
    "posle pered mezhdu raznitsa raznica otlichie otlichaetsya rabotaet sdelat poschitat posmotret nedelyu nedelu "
    "nedeli mesyac mesyats den dnya dney chas chasa chasov stoit stoimost arenda arendy arendu skazhi podskazhi "
    "budet na po za ot iz mozhet vse vsyo pochemu-to umeesh umeete "
    "pomogi privet spasibo potyanet vlezet zapustit obuchit obuchenie modeli modelyu vidyuha vidyuhu "
    "videokarta videokarty karta karty kartu pamyat pamyati")
_RUSSIAN_WORDS = frozenset(_RUSSIAN_WORD_LIST.split())
_RUSSIAN_ENDING = re.compile(r"(iya|iyu|nie|niya|nost|ost|ogo|ego|aya|yaya|yye|yy|iy|ykh|ikh|ami|yami|tsya|tsa|shch)$")
_WORD = re.compile(r"[A-Za-z']+")
_NAMED = re.compile(r"[A-Za-z0-9]*\d[A-Za-z0-9]*")  # l40s, 70b, h100: names and sizes, not words
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9'._+-]*")
MIN_RUSSIAN_WORDS = 2
MIN_RUSSIAN_SHARE = 0.4

# longest first: "shch" before "sh", "ya" before "y"
_LETTERS = (
    ("shch", "щ"), ("tsya", "тся"), ("iya", "ия"), ("iyu", "ию"), ("iye", "ие"), ("sch", "щ"), ("zh", "ж"),
    ("kh", "х"), ("ts", "ц"), ("ch", "ч"), ("sh", "ш"), ("yu", "ю"),
    ("ju", "ю"), ("ya", "я"), ("ja", "я"), ("yo", "ё"), ("jo", "ё"), ("ye", "е"), ("yy", "ый"), ("iy", "ий"),
    ("ij", "ий"), ("'", "ь"), ("a", "а"), ("b", "б"), ("v", "в"), ("w", "в"), ("g", "г"), ("d", "д"), ("e", "е"),
    ("z", "з"), ("i", "и"), ("j", "й"), ("k", "к"), ("q", "к"), ("l", "л"), ("m", "м"), ("n", "н"), ("o", "о"),
    ("p", "п"), ("r", "р"), ("s", "с"), ("t", "т"), ("u", "у"), ("f", "ф"), ("h", "х"), ("c", "ц"), ("x", "кс"),
)
_VOWELS = "аеёиоуыэюя"
# the commonest words whose soft sign nobody types
_SPELLED = {"skolko": "сколько", "posmotret": "посмотреть", "stoimost": "стоимость", "pamyat": "память",
            "den": "день", "mesyac": "месяц", "mesyats": "месяц", "raznitsa": "разница", "raznica": "разница",
            "sdelat": "сделать", "poschitat": "посчитать", "zapustit": "запустить", "obuchit": "обучить",
            "bolshe": "больше", "menshe": "меньше", "modelyu": "моделью"}
_E_WORDS = frozenset({"eto", "etot", "eta", "eti", "etu", "etogo", "etim", "etoy", "etomu", "etih", "etikh"})


def russian_in_latin(text: str, names: Container[str] = frozenset()) -> bool:
    """The message is Russian typed in Latin letters: no Cyrillic, and enough of its words (``names`` and
    single letters aside: "llama", the "l" of "l40s") are Russian ones."""
    if re.search(r"[А-Яа-яЁё]", text):
        return False
    words = [word.lower() for word in _WORD.findall(_NAMED.sub(" ", text))]
    words = [word for word in words if len(word) > 1 and word not in names]
    russian = [word for word in words if word in _RUSSIAN_WORDS or (len(word) > 4 and _RUSSIAN_ENDING.search(word))]
    markers = {word for word in words if word in _RUSSIAN_WORDS}
    return len(markers) >= MIN_RUSSIAN_WORDS and len(russian) >= MIN_RUSSIAN_SHARE * max(1, len(words))


def _spell(word: str) -> str:
    lower = word.lower()
    if lower in _SPELLED:
        return _SPELLED[lower]
    if lower in _E_WORDS:
        lower = "э" + lower[1:]
    out: list[str] = []
    i = 0
    while i < len(lower):
        for latin, cyrillic in _LETTERS:
            if lower.startswith(latin, i):
                if latin == "ye" and out and out[-1][-1] not in _VOWELS:
                    cyrillic = "ые"  # aktivnye, novye: after a consonant "ye" is the plural ending
                out.append(cyrillic)
                i += len(latin)
                break
        else:
            if lower[i] == "y":  # after a vowel it ends a syllable (kakoy, moy): й; elsewhere (vy, bystro) ы
                out.append("й" if out and out[-1][-1] in _VOWELS else "ы")
            else:
                out.append(lower[i])
            i += 1
    return "".join(out)


def to_cyrillic(text: str, names: Container[str] = frozenset()) -> str:
    """``text`` in Cyrillic, but for its names: words with digits (h100, 7b), and ``names`` (lower case)."""
    def spell(match: re.Match[str]) -> str:
        token = match.group(0)
        if not token[0].isalpha() or any(ch.isdigit() for ch in token) or any(ch in token for ch in "._+") \
                or token.lower() in names:
            return token
        return _spell(token)
    return _TOKEN.sub(spell, text)


def latin_words(texts: Iterable[str]) -> frozenset[str]:
    """The words Russian texts write in Latin letters (the glossary's "batch", "KV cache", "LoRA"): a Russian
    message in Latin letters keeps them as they are."""
    return frozenset(word.lower() for text in texts for word in _WORD.findall(text) if len(word) > 1)
