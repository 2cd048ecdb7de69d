"""Free-text /fit requests in Russian or English, in any order, parsed into a FitRequest. Pure.

    llama-3.1-70b q4_k_m 2xH100 ctx=32k batch=4
    qwen2.5-7b на 4090
    влезет ли mixtral в две A100?
    13b lora r=64 seq=4096 on a100-40gb
    sdxl 4 images 1024 vae_tiling
    Хватит ли одной H100 чтобы дообучить llama 3 8b с LoRA?
    will llama 70b fit on two a100s for inference with 32k context

Customers write in free words, so a word the parser does not use is not reported as such: only what
looks like a name (a model, a GPU, a quantization: :meth:`RequestParser.looks_like_name`) and resolves to
nothing becomes a note, with "did you mean". A duration is read and set aside (memory does not depend on
it); a zero or negative one is refused like a zero GPU count.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from gpu.catalog import GPUCatalog, GPUSpec, normalize_name, suggest
from gpu.fit.architectures import ModelCatalog, ModelInputError, ModelSpec, model_from_param_count, parse_param_count
from gpu.fit.engine import FitRequest
from gpu.fit.quant import QUANT_ALIASES, WEIGHT_FORMATS, normalize_kv, normalize_quant
from gpu.quote.duration import Duration, Unit, duration_part
from gpu.request_words import TIMES, UNIT_WORDS, count_value, drop_foreign, plural_tolerant, read_gpu
from infra.i18n import Phrase

MAX_TEXT = 500
DIFFUSION_QUANTS = ("bf16", "fp16", "fp8", "fp32", "nf4", "nf4_nodq", "int8", "q8_0", "q4_0")
MAX_CONTEXT = 10_000_000
MAX_GPU_COUNT = 64  # GPUs of one request, the grammar's bound and every caller's


class FitInputError(ValueError):
    """A request the engine cannot evaluate: a catalog phrase (rendered by the fronts) and suggestions."""

    def __init__(self, message_key: str, suggestions: list[str] | None = None, /, **params: Any) -> None:
        self.phrase = Phrase(message_key, params)
        self.suggestions = suggestions or []
        super().__init__(self.phrase.render("en"))

    @property
    def message(self) -> str:
        return str(self)


@dataclass
class ParsedRequest:
    request: FitRequest
    ignored: list[str] = field(default_factory=list)  # every word not used, ordinary words included
    unknown: list[str] = field(default_factory=list)  # the ignored words that look like a name, grouped
    other_model: str | None = None  # a second model named: only the first is sized

    def notes(self, parser: RequestParser) -> list[Phrase]:
        """One note per name nobody knows ("h300", "rtx 5070 ti super", "q5_k_xl"): "did you mean" where
        something is close, else plainly. Ordinary words ("чтобы", "using") are never reported."""
        notes, plain = [], []
        for word in self.unknown:
            options = parser.did_you_mean(word)
            if options:
                notes.append(Phrase.of("fit_note_unknown_word", word=word, options=", ".join(options)))
            else:
                plain.append(word)
        if plain:
            notes.append(Phrase.of("fit_note_ignored", words=", ".join(plain)))
        if self.other_model is not None:
            notes.insert(0, Phrase.of("fit_note_other_model", model=self.request.model.name, other=self.other_model))
        return notes


STOP_WORDS = {
    "/fit", "fit", "fits", "will", "would", "does", "do", "can", "i", "run", "on", "in", "into", "a", "an",
    "the", "with", "and", "of", "for", "my", "is", "it", "влезет", "влезут", "поместится", "поместятся",
    "войдёт", "войдет", "ли", "в", "во", "на", "с", "со", "и", "а", "мне", "запустить", "запущу", "можно",
    "gpu", "gpus", "гпу", "карту", "карты", "картах", "карте", "видеокарту", "видеокарты", "видеокартах",
    "x", "×", "х", "шт", "pcs", "model", "модель", "модели", "сколько", "нужно", "надо", "how", "many",
    "need", "memory", "vram", "памяти", "what", "which", "какой", "какая", "какие", "хватит", "enough",
    "please", "пожалуйста", "to", "по", "context", "контекст", "контекстом", "batch", "батч",
    # "сколько памяти нужно для…", "what GPU do I need for…", "на чём запустить…" (app.intents.FIT_QUESTION)
    "для", "требуется", "потребуется", "необходимо", "займёт", "займет", "занимает", "видеопамяти", "нужна",
    "нужен", "нужны", "видеокарта", "видеокарт", "карт", "чём", "чем", "поднять", "развернуть", "much", "ram",
    "required", "requirements", "needed", "needs", "should", "use",
} | UNIT_WORDS
# models whose weights are not published (served only through their makers' APIs): there is nothing to size
CLOSED_MODEL = re.compile(r"(?i)\b(chat\s?gpt|gpt[-\s]?(3\.5|4(\.\d)?o?|5)(-(turbo|mini|nano|pro))?|claude(\s+[\d.]+)?"
                          r"(\s+(opus|sonnet|haiku))?|gemini(\s+[\d.]+)?(\s+(pro|flash|ultra))?|midjourney|"
                          r"dall[-\s]?e(\s?\d)?)(?![\w.-])")
OPEN_ALTERNATIVES = ("llama-3.1-405b", "deepseek-r1", "qwen2.5-72b")
MODE_WORDS = {
    "inference": "inference", "infer": "inference", "serve": "inference", "serving": "inference",
    "инференс": "inference", "train": "train", "training": "train", "обучение": "train",
    "обучения": "train", "finetune": "train", "fine-tune": "train", "sft": "train",
    "lora": "lora", "лора": "lora", "qlora": "qlora", "кулора": "qlora",
}
PARALLEL_WORDS = {
    "ddp": "ddp", "fsdp": "fsdp", "zero1": "zero1", "zero-1": "zero1", "zero2": "zero2", "zero-2": "zero2",
    "zero3": "zero3", "zero-3": "zero3", "deepspeed": "zero3", "tp": "tp", "pp": "pp",
}
OPTIMIZER_WORDS = {"adamw": "adamw", "adam": "adamw", "adamw_bf16": "adamw_bf16", "bf16_adam": "adamw_bf16",
                   "adam8bit": "adam8bit", "adam_8bit": "adam8bit", "8bit_adam": "adam8bit",
                   "adamw8bit": "adam8bit", "paged_adamw_8bit": "adam8bit"}
FLAG_WORDS = {"tiling": ("vae_tiling", True), "vae_tiling": ("vae_tiling", True),
              "tiled": ("vae_tiling", True),
              "slicing": ("vae_slicing", True), "vae_slicing": ("vae_slicing", True),
              "gc": ("grad_checkpointing", True), "checkpointing": ("grad_checkpointing", True),
              "no_gc": ("grad_checkpointing", False), "nogc": ("grad_checkpointing", False),
              "no-gc": ("grad_checkpointing", False)}
KEY_ALIASES = {
    "ctx": "context", "context": "context", "контекст": "context", "seq": "context", "seq_len": "context",
    "seqlen": "context", "cutoff": "context", "cutoff_len": "context", "max_len": "context", "len": "context",
    "batch": "batch", "bs": "batch", "батч": "batch", "micro_batch": "batch", "mb": "batch",
    "concurrency": "batch", "users": "batch", "kv": "kv_dtype", "kv_cache": "kv_dtype", "cache": "kv_dtype",
    "kv_dtype": "kv_dtype", "quant": "quant", "q": "quant", "dtype": "quant", "precision": "quant",
    "tp": "tp", "pp": "pp", "gpus": "gpu_count", "n": "gpu_count", "count": "gpu_count",
    "rank": "lora_rank", "r": "lora_rank", "lora_rank": "lora_rank", "targets": "lora_targets",
    "res": "resolution", "resolution": "resolution", "size": "resolution", "images": "images",
    "imgs": "images", "beam": "beam", "beams": "beam", "util": "utilization", "utilization": "utilization",
    "gpu_memory_utilization": "utilization", "prefill": "prefill", "mode": "mode", "optim": "optimizer",
    "optimizer": "optimizer", "parallel": "parallel", "gpu": "gpu",
}
# Modes written as inflected Russian words or English verb forms (never a past participle: "my fine-tuned
# llama" is a model to run, not a job to train).
MODE_FORMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(?:до|пере)?обуч(?:ить|ать|аю|аем|ение|ения|ению|ением|ении|у|им|ишь)$"), "train"),
    # «зафайнтюнить», «дотренировать», «файнтюню»: the verb with its prefixes and persons (not «файнтюненная»)
    (re.compile(r"^(?:fine-?tun(?:e|es|ing)|(?:за|до|пере)?(?:файн-?тюн|финтюн)(?:инг|инга|ить|ю|им|ишь|а|у|ом|е|ы|ов)?"
                r"|(?:на|до|пере)?тренир(?:овать|овка|овки|овку|ую|уем))$"), "train"),
    (re.compile(r"^лор(?:а|у|ой|ы|е)$"), "lora"),
    (re.compile(r"^кулор(?:а|у|ой|ы|е)$"), "qlora"),
    (re.compile(r"^инференс\w*$"), "inference"),
)
# a mode that names the method wins over a generic one: "fine-tune llama with QLoRA" is QLoRA, in any order
MODE_RANK = {"inference": 0, "train": 1, "lora": 2, "qlora": 2}
# option words in any case, before their number: "с контекстом 4096", "с батчем 16"
KEY_FORMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^контекст(?:а|у|ом|е)?$"), "context"), (re.compile(r"^батч(?:а|у|ем|е)?$"), "batch"),
)
# "в 4 бита", "4 bit", "8-битной": a bit width is a quantization
BITS_WORD = re.compile(r"^(?:bits?|бит\w*)$")
BITS_GLUED = re.compile(r"^(\d{1,2})-?(?:bits?|бит\w*)$")
BITS_QUANT = {4: "4bit", 8: "8bit", 16: "fp16", 32: "fp32"}
# "4096 tokens", "20 users", "16 concurrent requests": a number and what it counts
SIZE = re.compile(r"^\d+(?:[.,]\d+)?[kкmм]?$")
TOKEN_NOUN = re.compile(r"^(?:tokens?|tok|токен\w*)$")
# people and streams served at once; requests only when said to be concurrent ("100 requests" may be a day's)
BATCH_NOUN = re.compile(r"^(?:users?|clients?|streams?|sessions?|пользовател\w*|клиент\w*|поток\w*|сесси\w*)$")
CONCURRENT = re.compile(r"^(?:concurrent|simultaneous|parallel|одновременн\w*|параллельн\w*)$")
CONCURRENT_NOUN = re.compile(r"^(?:requests?|запрос\w*)$")
RATE = frozenset({"per", "a", "в", "за", "daily", "monthly", "/day", "/s"})  # "20 users per day" is no batch
THOUSANDS = re.compile(r"(?<![\d.,])(\d{1,3}(?:,\d{3})+)(?![\d,])")  # "10,000 h100" is one number
LOOKS_LIKE_GPU = re.compile(r"^(rtx|gtx|mi|[a-z])-?\d{2,4}[a-z]{0,4}$")
RESOLUTION = re.compile(r"^(\d{2,5})\s*[x×х*]\s*(\d{2,5})$")
IMAGES = re.compile(r"^(\d{1,3})\s*(images?|imgs?|pics?|картин\w*|изображени\w*)$")
TOKEN_SPLIT = re.compile(r"[\s,;!?]+")
FINE_TUNE_SPACED = re.compile(r"\bfine\s+tun(e|es|ing)\b")
MARKUP = re.compile(r"</?[a-z]{1,10}>|[<>&]")  # pasted HTML tags and stray markup characters


def parse_size(text: str, what: str) -> int:
    """'32k' -> 32768, '128k' -> 131072, '1m' -> 1048576, '4096' -> 4096, '1.5k' -> 1536."""
    match = re.fullmatch(r"(\d+(?:[.,]\d+)?)\s*([kкmм]?)", text.strip().lower())
    if not match:
        raise FitInputError("fit_err_not_a_number", value=text, what=what)
    value = float(match.group(1).replace(",", "."))
    unit = match.group(2)
    scale = 1024 if unit in ("k", "к") else 1024 * 1024 if unit in ("m", "м") else 1
    return int(value * scale)


def _bounded(value: int, low: int, high: int, what: str) -> int:
    if not low <= value <= high:
        raise FitInputError("fit_err_out_of_range", what=what, low=f"{low:,}", high=f"{high:,}", value=f"{value:,}")
    return value


class RequestParser:
    def __init__(self, gpus: GPUCatalog, models: ModelCatalog) -> None:
        self.gpus = gpus
        self.models = models
        self._words: dict[str, str] | None = None
        self._names: tuple[frozenset[str], frozenset[str]] | None = None
        self._terms: frozenset[str] | None = None
        self._gpu = plural_tolerant(gpus.find)  # "two a100s", "a pair of 4090s", "на двух 4090-х"

    def _vocabulary(self) -> dict[str, str]:
        """Every word the parser knows (normalized spelling -> what to suggest), for "did you mean"."""
        if self._words is None:
            words: dict[str, str] = {}
            for key in KEY_ALIASES:
                words.setdefault(normalize_name(key), f"{key}=")
            for word in (*MODE_WORDS, *PARALLEL_WORDS, *OPTIMIZER_WORDS, *FLAG_WORDS, *WEIGHT_FORMATS,
                         *QUANT_ALIASES):
                words.setdefault(normalize_name(word), word)
            for spelling, gpu_id in self.gpus.spellings().items():
                words.setdefault(spelling, gpu_id)
            for spelling, model_id in self.models.spellings().items():
                words.setdefault(spelling, model_id)
            self._words = words
        return self._words

    def did_you_mean(self, word: str) -> list[str]:
        return suggest(word, self._vocabulary(), limit=3, cutoff=70.0)

    # ---- what looks like a name ----------------------------------------------------------------------
    def _name_words(self) -> tuple[frozenset[str], frozenset[str]]:
        """(families, name words) from the catalogs: "llama", "qwen", "rtx", "tesla" start a name; "ti",
        "ada", "instruct", "coder" are words inside one. Derived from the data, so new entries count."""
        if self._names is None:
            families: set[str] = set()
            words: set[str] = set(NAME_SUFFIXES)
            spellings = [(s.id, s.name, *s.aliases) for s in self.models.all()] + \
                [(s.id, s.name, *s.aliases) for s in self.gpus.all()]
            for names in spellings:
                for name in names:
                    pieces = [p for p in NAME_PIECES.split(name.lower()) if p]
                    lead = re.match(r"[a-z]+", pieces[0]) if pieces else None
                    if lead and len(lead.group(0)) >= 3:
                        families.add(lead.group(0))
                    words.update(p for p in pieces if p.isalpha() and p not in STOP_WORDS)
            self._names = frozenset(families), frozenset(words)
        return self._names

    def looks_like_name(self, word: str) -> bool:
        """A word shaped like a model, GPU or quantization name; ordinary words, numbers and measures are
        not. Shape tests, not a word list:

        * letters with digits: "h300", "rtx5070", "q5_k_xl", "llama-9-70b", "int3" (a measure such as
          "80gb", "32k", "1080p", "4-х", "x4" or a parameter count "671b" is not a name);
        * a GPU model number: "5070", "4060" (not "2048", "1000");
        * a known family with more after it: "llama-guard", "qwen-vl", "deepseek-coder";
        * a one-letter slip in a technical term: "lroa", "mixtrall", "deepsped".
        """
        if word.isdecimal():
            return bool(GPU_NUMBER.match(word))
        if word in SOFTWARE:
            return False
        if not any(char.isalnum() for char in word) or parse_param_count(word) is not None:
            return False
        if MEASURE.match(word) or count_value(word, weak=True) is not None or TIMES_SHAPE.match(word):
            return False
        latin = normalize_name(word)  # Cyrillic look-alikes read as Latin: "н300" is "h300"
        if any(char.isdigit() for char in latin) and re.search(r"[a-z]", latin):
            return True
        families, _ = self._name_words()
        if any(word.startswith(family) and FAMILY_TAIL.match(word[len(family):]) for family in families):
            return True
        return bool(LATIN_WORD.match(word)) and any(_one_slip(word, term) for term in self._typo_terms())

    def _typo_terms(self) -> frozenset[str]:
        """Words a one-letter slip is checked against: the parser's technical terms and the model families
        of the catalog's ids ("llama", "mixtral"), not every word of every alias ("stable" is near "table")."""
        if self._terms is None:
            terms = {w for w in (*PARALLEL_WORDS, *OPTIMIZER_WORDS, *WEIGHT_FORMATS, *QUANT_ALIASES, "lora", "qlora")
                     if w.isalpha() and w not in COMMON_TERMS}
            terms.update(lead.group(0) for spec in self.models.all() if (lead := re.match(r"[a-z]+", spec.id)))
            self._terms = frozenset(w for w in terms if len(w) >= 4)
        return self._terms

    def unknown_names(self, ignored: list[tuple[int, str]]) -> list[str]:
        """The ignored words worth a note: each name-like word with the name words around it, so that
        "rtx 5070 ti super" is one name; a family word alone ("llama" next to "13b") is not reported."""
        families, name_words = self._name_words()
        at = dict(ignored)
        used: set[int] = set()
        names: list[str] = []

        def part(pos: int) -> bool:
            word = at.get(pos)
            return word is not None and pos not in used and (
                word.isdecimal() or word in families or word in name_words or self.looks_like_name(word))

        for pos, word in ignored:
            # a name-like word, or a family word with a number after it ("llama 9")
            anchor = self.looks_like_name(word) or (word in families and at.get(pos + 1, "").isdecimal())
            if pos in used or not anchor:
                continue
            start = end = pos
            while part(start - 1):
                start -= 1
            if start == pos and word[0].isdigit() and SHORT_LATIN.match(at.get(pos - 1, "")) and pos - 1 not in used:
                start -= 1  # "gtx 1080": a maker's prefix the catalog does not know
            while part(end + 1):
                end += 1
            used.update(range(start, end + 1))
            names.append(" ".join(at[p] for p in range(start, end + 1)))
        return names

    def parse(self, text: str, model: ModelSpec | None = None) -> ParsedRequest:
        if not isinstance(text, str):
            raise FitInputError("fit_err_usage")
        text = text.strip()
        if len(text) > MAX_TEXT:
            raise FitInputError("fit_err_too_long", length=len(text), limit=MAX_TEXT)
        clean = THOUSANDS.sub(lambda m: m.group(1).replace(",", ""), drop_foreign(MARKUP.sub(" ", text.lower())))
        clean = FINE_TUNE_SPACED.sub(r"fine-tun\1", clean)  # "fine tune" is "fine-tune"
        # "~50 users", "≈20 клиентов": a number said roughly is the number
        tokens = [tok.strip(".:()[]{}\"'«»“”").lstrip("~≈") for tok in TOKEN_SPLIT.split(clean)]
        tokens = [tok for tok in tokens if tok in TIMES or any(char.isalnum() for char in tok)]
        if not tokens and model is None:
            raise FitInputError("fit_err_usage")
        opts: dict[str, Any] = {}
        gpu: GPUSpec | None = None
        count: int | None = None
        leftover: list[tuple[int, str]] = []
        pending_count: int | None = None
        duration: list[tuple[Decimal, Unit]] = []  # set aside, but "на 0 часов" / "for -3 days" is refused
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
            # key=value or key:value
            if "=" in tok:
                key, _, value = tok.partition("=")
                self._option(opts, key, value)
                i += 1
                continue
            option = KEY_ALIASES.get(tok) or next((k for form, k in KEY_FORMS if form.match(tok)), None)
            if option in ("context", "batch", "lora_rank", "beam") and nxt and SIZE.match(nxt):
                self._option(opts, option, nxt)  # "ctx 32k", "batch 8", "с контекстом 4096", "батчем 16"
                i += 2
                continue
            # GPUs with their count, in the grammar /quote shares (gpu.request_words): "h200 x4", "4×H200",
            # "h200 4 шт", "две 4090", "2 карты 4090", "rtx 6000 ada", "a100 40gb"
            mention = read_gpu(tokens, i, self._gpu)
            if mention is not None:
                gpu, i = mention.gpu, mention.end
                if mention.count is not None:
                    count = mention.count
                elif pending_count is not None:
                    count, pending_count = pending_count, None
                continue
            part = duration_part(tokens, i)
            if part is not None:  # "for 2 weeks": the memory needed does not depend on it
                amount, unit, i = part
                duration.append((amount, unit))
                continue
            taken = self._counted_noun(opts, tok, tokens[i + 1:i + 4])
            if taken:
                i += taken
                continue
            number = count_value(tok) if not tok.isdecimal() else None
            if number is not None:  # "на двух картах ... A100": the count comes before other words
                pending_count = number
                i += 1
                continue
            if self._names_model(tokens, i):  # "deepseek r1": not LoRA rank 1
                leftover.append((i, tok))
                i += 1
                continue
            if self._word_option(opts, tok):
                i += 1
                continue
            if RESOLUTION.match(tok):
                width, height = (int(v) for v in RESOLUTION.match(tok).groups())  # type: ignore[union-attr]
                opts["resolution"] = _bounded(max(width, height), 64, 8192, "resolution")
                i += 1
                continue
            if IMAGES.match(tok):
                opts["images"] = _bounded(int(IMAGES.match(tok).group(1)), 1, 64, "images")  # type: ignore[union-attr]
                i += 1
                continue
            if tok.isdecimal() and nxt and IMAGES.match(f"{tok}{nxt}"):
                opts["images"] = _bounded(int(tok), 1, 64, "images")
                i += 2
                continue
            mentions_context = any(word in text.lower() for word in ("ctx", "контекст", "context"))
            if re.fullmatch(r"\d+(?:[.,]\d+)?[kк]", tok) and mentions_context:
                opts.setdefault("context", _bounded(parse_size(tok, "context"), 1, MAX_CONTEXT, "context"))
                i += 1
                continue
            if tok not in STOP_WORDS:
                leftover.append((i, tok))
            i += 1
        if duration and not Duration(tuple(duration)).is_positive:
            raise FitInputError("fit_err_bad_duration")
        if "gpu" in opts:
            gpu = opts.pop("gpu")
        if "gpu_count" in opts:
            count = opts.pop("gpu_count")
        if pending_count is not None and gpu is not None and count is None:
            count = pending_count
        model, ignored = self._model(leftover, model)
        if gpu is None:
            for _, word in ignored:
                if LOOKS_LIKE_GPU.match(word) and parse_param_count(word) is None:
                    raise FitInputError("fit_err_unknown_gpu", self.gpus.suggestions(word), name=word)
        other = self._named_model(ignored)  # «whisper и llama 8b одновременно»: one model is sized, said so
        return ParsedRequest(self._build(model, gpu, count, opts), [w for _, w in ignored],
                             self.unknown_names(ignored),
                             other_model=other.name if other is not None and other.id != model.id else None)

    def _named_model(self, words: list[tuple[int, str]]) -> ModelSpec | None:
        """A catalog model named by adjacent words (a name, not a bare size such as "8b")."""
        for width in range(min(5, len(words)), 0, -1):
            for start in range(len(words) - width + 1):
                run = words[start:start + width]
                if run[-1][0] - run[0][0] != width - 1 or all(parse_param_count(w) is not None for _, w in run):
                    continue
                spec = self.models.find(" ".join(w for _, w in run))
                if spec is not None:
                    return spec
        family_size = self._family_and_size(words)  # "llama 8b": a family and its size
        return family_size[0] if family_size is not None else None

    def _counted_noun(self, opts: dict[str, Any], tok: str, following: list[str]) -> int:
        """A number read with the noun after it: "в 4 бита" (quantization), "4096 tokens" (context),
        "20 users" / "16 concurrent requests" (batch). Returns how many tokens it took (0: none)."""
        nxt = following[0] if following else ""
        glued = BITS_GLUED.match(tok)
        if glued or (tok.isdecimal() and BITS_WORD.match(nxt)):
            quant = normalize_quant(BITS_QUANT.get(int(glued.group(1) if glued else tok), ""))
            if quant is not None:
                opts["quant"] = quant
                return 1 if glued else 2
            return 0
        if not SIZE.match(tok):
            return 0
        if TOKEN_NOUN.match(nxt):
            if len(following) > 1 and (following[1] in RATE or following[1].startswith("/")):
                return 2  # "5 токенов в секунду", "30 tokens per second": a speed said, not a context
            opts["context"] = _bounded(parse_size(tok, "context"), 1, MAX_CONTEXT, "context")
            return 2
        concurrent = bool(CONCURRENT.match(nxt))
        noun = following[1] if concurrent and len(following) > 1 else nxt
        after = following[2 if concurrent else 1] if len(following) > (2 if concurrent else 1) else ""
        counted = BATCH_NOUN.match(noun) or (concurrent and CONCURRENT_NOUN.match(noun))
        if tok.isdecimal() and counted and after not in RATE:
            opts["batch"] = _bounded(parse_size(tok, "batch"), 1, 4096, "batch")
            return 3 if concurrent else 2
        return 0

    def _names_model(self, tokens: list[str], index: int) -> bool:
        """Whether ``tokens[index]`` is (part of) a catalog model name, alone or with a neighbour."""
        tok = tokens[index]
        if self.models.find(tok) is not None:
            return True
        before = tokens[index - 1] if index > 0 else None
        after = tokens[index + 1] if index + 1 < len(tokens) else None
        return (before is not None and self.models.find(f"{before} {tok}") is not None) or \
            (after is not None and self.models.find(f"{tok} {after}") is not None)

    def _word_option(self, opts: dict[str, Any], tok: str) -> bool:
        mode = MODE_WORDS.get(tok) or next((m for form, m in MODE_FORMS if form.match(tok)), None)
        if mode is not None:
            if MODE_RANK[mode] >= MODE_RANK[opts.get("mode", "inference")]:
                opts["mode"] = mode
            return True
        if tok in PARALLEL_WORDS:
            opts["parallel"] = PARALLEL_WORDS[tok]
            return True
        if tok in OPTIMIZER_WORDS:
            opts["optimizer"] = OPTIMIZER_WORDS[tok]
            return True
        if tok in FLAG_WORDS:
            key, value = FLAG_WORDS[tok]
            opts[key] = value
            return True
        match = re.fullmatch(r"(tp|pp)(\d{1,2})", tok)
        if match:
            opts["parallel"] = match.group(1)
            opts["gpu_count"] = _bounded(int(match.group(2)), 1, MAX_GPU_COUNT, "GPU count")
            return True
        match = re.fullmatch(r"r(\d{1,4})", tok)
        if match:
            opts["lora_rank"] = _bounded(int(match.group(1)), 1, 4096, "LoRA rank")
            return True
        quant = normalize_quant(tok)
        if quant and parse_param_count(tok) is None:
            opts["quant"] = quant
            return True
        return False

    def _option(self, opts: dict[str, Any], key: str, value: str) -> None:
        name = KEY_ALIASES.get(key.strip())
        if name is None:
            close = [k for k in KEY_ALIASES if k[:2] == key[:2]][:3]
            raise FitInputError("fit_err_unknown_option", [f"{k}=" for k in close], key=key)
        value = value.strip()
        if not value:
            raise FitInputError("fit_err_needs_value", key=key)
        if name == "context":
            opts["context"] = _bounded(parse_size(value, "context"), 1, MAX_CONTEXT, "context")
        elif name in ("batch", "images", "beam"):
            opts[name] = _bounded(parse_size(value, name), 1, 4096 if name == "batch" else 64, name)
        elif name in ("tp", "pp"):
            opts["parallel"] = name
            opts["gpu_count"] = _bounded(parse_size(value, name), 1, MAX_GPU_COUNT, "GPU count")
        elif name == "gpu_count":
            opts["gpu_count"] = _bounded(parse_size(value, "GPU count"), 1, MAX_GPU_COUNT, "GPU count")
        elif name == "lora_rank":
            opts["lora_rank"] = _bounded(parse_size(value, "LoRA rank"), 1, 4096, "LoRA rank")
        elif name == "resolution":
            side = parse_size(value.split("x")[0], "resolution")
            opts["resolution"] = _bounded(side, 64, 8192, "resolution")
        elif name == "prefill":
            opts["prefill"] = _bounded(parse_size(value, "prefill"), 1, MAX_CONTEXT, "prefill")
        elif name == "utilization":
            try:
                number = float(value.rstrip("%"))
                util = number / 100 if value.endswith("%") or number > 1 else number
            except ValueError:
                raise FitInputError("fit_err_bad_util", value=value) from None
            if not 0.1 <= util <= 1.0:
                raise FitInputError("fit_err_util_range")
            opts["utilization"] = util
        elif name == "kv_dtype":
            kv = normalize_kv(value)
            if kv is None:
                raise FitInputError("fit_err_unknown_kv", ["f16", "fp8", "q8_0", "q4_0"], value=value)
            opts["kv_dtype"] = kv
        elif name == "quant":
            quant = normalize_quant(value)
            if quant is None:
                raise FitInputError("fit_err_unknown_quant", _quant_suggestions(value), value=value)
            opts["quant"] = quant
        elif name == "mode":
            if value not in MODE_WORDS:
                raise FitInputError("fit_err_unknown_mode", ["inference", "train", "lora", "qlora"], value=value)
            opts["mode"] = MODE_WORDS[value]
        elif name == "optimizer":
            if value not in OPTIMIZER_WORDS:
                raise FitInputError("fit_err_unknown_optimizer", ["adamw", "adamw_bf16", "adam8bit"], value=value)
            opts["optimizer"] = OPTIMIZER_WORDS[value]
        elif name == "parallel":
            if value not in PARALLEL_WORDS:
                raise FitInputError("fit_err_unknown_parallel", sorted(set(PARALLEL_WORDS.values())), value=value)
            opts["parallel"] = PARALLEL_WORDS[value]
        elif name == "lora_targets":
            opts["lora_targets"] = "attn" if value.startswith(("attn", "qv", "q_proj")) else "all"
        elif name == "gpu":
            spec = self.gpus.find(value)
            if spec is None:
                raise FitInputError("fit_err_unknown_gpu", self.gpus.suggestions(value), name=value)
            opts["gpu"] = spec

    def _model(self, words: list[tuple[int, str]], given: ModelSpec | None
               ) -> tuple[ModelSpec, list[tuple[int, str]]]:
        if given is not None:
            return given, words
        # longest run of adjacent words that names a catalog model
        for width in range(min(5, len(words)), 0, -1):
            for start in range(len(words) - width + 1):
                run = words[start:start + width]
                if run[-1][0] - run[0][0] != width - 1:
                    continue
                spec = self.models.find(" ".join(w for _, w in run))
                if spec:
                    rest = words[:start] + words[start + width:]
                    size = self._other_size_word(spec, rest)
                    if size is not None:
                        # "deepseek r1 distill 32b": the name with that size is another model of the catalog
                        variant = self.models.find(" ".join([*(w for _, w in run), size[1]]))
                        if variant is not None:
                            return variant, [word for word in rest if word != size]
                        if width == 1:
                            break  # "mistral nemo 12b": a family alias, but a size it is not; read it below
                    version = self._other_version(spec, run, rest)
                    if version is not None:
                        # "stable diffusion 3.5 large", "flux 2": another version of the family, which the
                        # catalog lacks; never sized as the version it has
                        name = " ".join([*(w for _, w in run), version])
                        raise FitInputError("fit_err_unknown_version", self.models.suggestions(name), name=name)
                    return spec, rest
            else:
                continue
            break
        family_size = self._family_and_size(words)
        if family_size is not None:
            return family_size
        for index, (_, word) in enumerate(words):
            params = parse_param_count(word)
            if params is not None:
                try:
                    return model_from_param_count(params), words[:index] + words[index + 1:]
                except ModelInputError as exc:
                    raise FitInputError(exc.phrase.key, **exc.phrase.params) from None
        if not words:
            raise FitInputError("fit_err_which_model", [m.id for m in self.models.all()[:3]])
        closed = CLOSED_MODEL.search(" ".join(w for _, w in words))
        if closed is not None:  # "gpt-4", "claude": no published weights, nothing to size
            raise FitInputError("fit_err_closed_model", list(OPEN_ALTERNATIVES), name=closed.group(0))
        candidate = " ".join(w for _, w in words[:3])
        suggestions = self.models.suggestions(candidate)
        if not suggestions:
            for _, word in words:
                suggestions = self.models.suggestions(word)
                if suggestions:
                    candidate = word
                    break
        if not suggestions and any(LOOKS_LIKE_GPU.match(w) for _, w in words):
            word = next(w for _, w in words if LOOKS_LIKE_GPU.match(w))
            raise FitInputError("fit_err_unknown_gpu_no_model", self.gpus.suggestions(word), name=word)
        raise FitInputError("fit_err_unknown_model", suggestions, name=candidate)

    @staticmethod
    def _other_version(spec: ModelSpec, run: list[tuple[int, str]], rest: list[tuple[int, str]]) -> str | None:
        """A version number written right after a model's name that names no version ("stable diffusion 3.5",
        "flux 2 on a 4090"), which none of the model's names has; a count ("sdxl 2 images") is not one."""
        if any(ch.isdigit() for _, word in run for ch in word):
            return None
        following = {position: word for position, word in rest}
        after = run[-1][0] + 1
        word = following.get(after)
        names = {piece for name in (spec.id, spec.name, *spec.aliases) for piece in NAME_PIECES.split(name.lower())}
        if word in MODEL_VARIANTS and word not in names:
            # "mistral large 2": another model of the family (Mistral Large), not the one its bare name is
            version = following.get(after + 1)
            return f"{word} {version}" if version is not None and VERSION_NUMBER.fullmatch(version) else word
        if word is None or not VERSION_NUMBER.fullmatch(word):
            return None
        if word in names or any(piece.startswith(word) for piece in names):
            return None
        if "." not in word:  # a whole number is a version only before a variant word, a preposition or the end
            nxt = following.get(after + 1)
            if nxt is not None and nxt not in VERSION_FOLLOWERS:
                return None
        return word

    @staticmethod
    def _other_size_word(spec: ModelSpec, words: list[tuple[int, str]]) -> tuple[int, str] | None:
        """A parameter count written beside a model's name that is not that model's (off by over a quarter)."""
        for position, word in words:
            params = parse_param_count(word)
            if params is not None and spec.params and abs(params - spec.params) > 0.25 * spec.params:
                return position, word
        return None

    def _family_and_size(self, words: list[tuple[int, str]]
                         ) -> tuple[ModelSpec, list[tuple[int, str]]] | None:
        """ "qwen 32b", "llama 8b" (or "llama-8b" in one word): a family and a size that no alias spells,
        read as the first catalog model of that family with that size (catalog order); None when the catalog
        has no such model."""
        pairs = [(index - 1, index + 1, words[index - 1][1], words[index][1]) for index in range(1, len(words))
                 if words[index][0] == words[index - 1][0] + 1]
        for index, (_, word) in enumerate(words):
            if "-" in word:
                family, size = word.rsplit("-", 1)
                pairs.append((index, index + 1, family, size))
        # "llama 3 405b": the family, a version and a size, read as the catalog's model of that size whose version
        # begins so (Llama 3.1 405B: Llama 3 had no 405B)
        for index in range(2, len(words)):
            (p0, family), (p1, version), (p2, size) = words[index - 2], words[index - 1], words[index]
            if (p1, p2) != (p0 + 1, p0 + 2) or not family.isalpha() or not VERSION_NUMBER.fullmatch(version) \
                    or parse_param_count(size) is None:
                continue
            for spec in self.models.all():
                pieces = {piece for name in (spec.id, *spec.aliases) for piece in NAME_PIECES.split(name.lower())}
                if spec.id.startswith(f"{family}-{version}") and size in pieces:
                    return spec, words[:index - 2] + words[index + 1:]
        for start, end, family, size in pairs:
            if not family.isalpha() or parse_param_count(size) is None:
                continue
            for spec in self.models.all():
                pieces = {piece for name in (spec.id, *spec.aliases) for piece in NAME_PIECES.split(name.lower())}
                if spec.id.startswith(family) and size in pieces:
                    return spec, words[:start] + words[end:]
        return None

    def _build(self, model: ModelSpec, gpu: GPUSpec | None, count: int | None, opts: dict[str, Any]
               ) -> FitRequest:
        if count is not None:
            _bounded(count, 1, MAX_GPU_COUNT, "GPU count")
        mode = opts.pop("mode", "inference")
        training_asked = model.kind != "llm" and mode != "inference"
        if model.kind != "llm":
            mode = "inference"
        default_quant = "bf16"
        if model.native_quant and mode == "inference":
            default_quant = model.native_quant
        if model.kind == "asr":
            default_quant = "fp16"
        quant_given = "quant" in opts
        quant = opts.pop("quant", default_quant)
        if mode == "qlora":
            quant = "nf4"
        if model.kind == "diffusion" and quant not in DIFFUSION_QUANTS:
            raise FitInputError("fit_err_diffusion_quant", ["bf16", "fp8", "nf4"], quant=quant)
        if mode == "train" and quant not in ("bf16", "fp16", "fp32"):
            raise FitInputError("fit_err_train_quant", ["qlora", "lora", "train"], quant=quant)
        request = FitRequest(model=model, gpu=gpu, gpu_count=count or 1, mode=mode, quant=quant,
                             count_given=count is not None, training_asked=training_asked, quant_given=quant_given)
        return replace(request, **opts)


def _quant_suggestions(value: str) -> list[str]:
    from rapidfuzz import process

    from gpu.fit.quant import WEIGHT_FORMATS

    found = process.extract(normalize_name(value), list(WEIGHT_FORMATS), limit=3)
    return [name for name, score, _ in found if score >= 50]


# ---- name shapes (RequestParser.looks_like_name) -------------------------------------------------------
# A number with a unit is a measure, not a name: 80gb, 32k, 1080p, 4bit, 8-бит, 24h, 1st, 4-х.
MEASURE = re.compile(r"^[-−+]?\d+(?:[.,]\d+)?[-_]?(?:gb|gib|гб|tb|тб|mb|мб|k|к|m|м|t|bits?|бит\w*|px|p|"
                     r"tok|tokens?|токен\w*|%|h|hr|hrs|ч|d|д|w|wk|mo|min|мин|s|sec|ms|st|nd|rd|th|"
                     r"х|ех|ёх|ух|ми|мя|ти|й|я|е|ой|ый|ом)$")
TIMES_SHAPE = re.compile(r"^(?:[x×х*][-−]?\d+|[-−]?\d+[x×х*])$")  # x4, 4x: a count
GPU_NUMBER = re.compile(r"^[1-9]\d[1-9]0$")  # 1080, 3090, 4060, 5070, 7900 is not (AMD's is "7900xtx")
FAMILY_TAIL = re.compile(r"^(?:[-_.][a-z0-9]|\d)")  # "llama" + "-guard", "qwen" + "4"
LATIN_WORD = re.compile(r"^[a-z]{4,}$")
SHORT_LATIN = re.compile(r"^[a-z]{2,4}$")  # "gtx" before "1080"
NAME_PIECES = re.compile(r"[\s\-_/()\[\]]+")
VERSION_NUMBER = re.compile(r"\d{1,2}(\.\d{1,2})?")
# a size or tier word of a family's other models: "mistral large", "gemma nano", "sdxl turbo"
MODEL_VARIANTS = frozenset({"large", "medium", "small", "mini", "nano", "nemo", "pro", "ultra", "max", "plus", "xl",
                            "xxl", "turbo", "lite", "micro", "tiny", "huge", "giant"})
# what follows a version in a model's name or the request around it: "flux 2 dev", "sd 3 on a 4090"
VERSION_FOLLOWERS = frozenset({
    "large", "medium", "small", "turbo", "pro", "dev", "schnell", "ultra", "mini", "base", "max", "plus", "instruct",
    "chat", "on", "for", "with", "in", "на", "для", "в", "с", "под", "или", "or", "vs",
})
# marketing words inside GPU names the catalog does not happen to use yet
NAME_SUFFIXES = frozenset({"super", "ti", "xt", "xtx", "pro", "max", "plus", "ultra"})
# Serving and training software: names, but of tools, not models ("llama 3 8b with ollama", "llama.cpp")
SOFTWARE = frozenset({
    "vllm", "ollama", "llama.cpp", "llamacpp", "llama-cpp", "llama_cpp", "sglang", "tgi", "tensorrt",
    "tensorrt-llm", "trt-llm", "exllama", "exllamav2", "exl2", "lmstudio", "lm-studio", "transformers",
    "diffusers", "comfyui", "automatic1111", "a1111", "forge", "unsloth", "axolotl", "peft", "accelerate",
    "koboldcpp", "mlx", "onnx", "triton", "pytorch", "torch", "jax", "cuda", "rocm",
})
# technical terms that are also everyday English: a slip near them is just another word ("fill", "halt")
COMMON_TERMS = frozenset({"half", "full", "train", "serve", "infer", "tiled", "tiling", "slicing", "adam"})


def _one_slip(word: str, term: str) -> bool:
    """One letter changed, added, dropped or two swapped ("lroa", "mixtrall"), and not merely a plural or
    a shortening ("llamas", "adam")."""
    if word in (term, f"{term}s") or term.startswith(word) or abs(len(word) - len(term)) > 1:
        return False
    if len(word) == len(term):
        diff = [i for i, (a, b) in enumerate(zip(word, term, strict=True)) if a != b]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and word[diff[0]] == term[diff[1]] and word[diff[1]] == term[diff[0]])
    short, long = (word, term) if len(word) < len(term) else (term, word)
    return any(long[:i] + long[i + 1:] == short for i in range(len(long)))
