"""Free-text /fit requests in Russian or English, in any order, parsed into a FitRequest. Pure.

    llama-3.1-70b q4_k_m 2xH100 ctx=32k batch=4
    qwen2.5-7b на 4090
    влезет ли mixtral в две A100?
    13b lora r=64 seq=4096 on a100-40gb
    sdxl 4 images 1024 vae_tiling
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from gpu.catalog import GPUCatalog, GPUSpec, normalize_name, suggest
from gpu.fit.engine import FitRequest
from gpu.fit.models import ModelCatalog, ModelInputError, ModelSpec, model_from_param_count, parse_param_count
from gpu.fit.quant import QUANT_ALIASES, WEIGHT_FORMATS, normalize_kv, normalize_quant
from gpu.request_words import UNIT_WORDS, count_value, read_gpu
from infra.i18n import Phrase

MAX_TEXT = 500
DIFFUSION_QUANTS = ("bf16", "fp16", "fp8", "fp32", "nf4", "nf4_nodq", "int8", "q8_0", "q4_0")
MAX_CONTEXT = 10_000_000


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
    ignored: list[str] = field(default_factory=list)

    def notes(self, parser: RequestParser) -> list[Phrase]:
        """One note per word nobody understood: "did you mean" where something is close, else plainly."""
        notes, plain = [], []
        for word in self.ignored:
            options = parser.did_you_mean(word)
            if options:
                notes.append(Phrase.of("fit_note_unknown_word", word=word, options=", ".join(options)))
            else:
                plain.append(word)
        if plain:
            notes.append(Phrase.of("fit_note_ignored", words=", ".join(plain)))
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
MODE_WORDS = {
    "inference": "inference", "infer": "inference", "serve": "inference", "serving": "inference",
    "инференс": "inference", "train": "train", "training": "train", "обучение": "train",
    "обучения": "train", "finetune": "train", "fine-tune": "train", "full": "train", "sft": "train",
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
LOOKS_LIKE_GPU = re.compile(r"^(rtx|gtx|mi|[a-z])-?\d{2,4}[a-z]{0,4}$")
RESOLUTION = re.compile(r"^(\d{2,5})\s*[x×х*]\s*(\d{2,5})$")
IMAGES = re.compile(r"^(\d{1,3})\s*(images?|imgs?|pics?|картин\w*|изображени\w*)$")
TOKEN_SPLIT = re.compile(r"[\s,;!?]+")
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

    def _gpu(self, text: str) -> GPUSpec | None:
        return self.gpus.find(text)

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

    def parse(self, text: str, model: ModelSpec | None = None) -> ParsedRequest:
        if not isinstance(text, str):
            raise FitInputError("fit_err_usage")
        text = text.strip()
        if len(text) > MAX_TEXT:
            raise FitInputError("fit_err_too_long", length=len(text), limit=MAX_TEXT)
        tokens = [tok.strip(".:()[]{}\"'«»") for tok in TOKEN_SPLIT.split(MARKUP.sub(" ", text.lower()))]
        tokens = [tok for tok in tokens if tok]
        if not tokens and model is None:
            raise FitInputError("fit_err_usage")
        opts: dict[str, Any] = {}
        gpu: GPUSpec | None = None
        count: int | None = None
        leftover: list[tuple[int, str]] = []
        pending_count: int | None = None
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
            if tok in KEY_ALIASES and KEY_ALIASES[tok] in ("context", "batch", "lora_rank", "beam") and nxt \
                    and re.fullmatch(r"\d+(?:[.,]\d+)?[kкmм]?", nxt):
                self._option(opts, tok, nxt)
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
            number = count_value(tok) if not tok.isdecimal() else None
            if number is not None:  # "на двух картах ... A100": the count comes before other words
                pending_count = number
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
        return ParsedRequest(self._build(model, gpu, count, opts), [w for _, w in ignored])

    def _word_option(self, opts: dict[str, Any], tok: str) -> bool:
        if tok in MODE_WORDS:
            opts["mode"] = MODE_WORDS[tok]
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
            opts["gpu_count"] = _bounded(int(match.group(2)), 1, 64, "GPU count")
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
            opts["gpu_count"] = _bounded(parse_size(value, name), 1, 64, "GPU count")
        elif name == "gpu_count":
            opts["gpu_count"] = _bounded(parse_size(value, "GPU count"), 1, 64, "GPU count")
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
                    return spec, words[:start] + words[start + width:]
        for index, (_, word) in enumerate(words):
            params = parse_param_count(word)
            if params is not None:
                try:
                    return model_from_param_count(params), words[:index] + words[index + 1:]
                except ModelInputError as exc:
                    raise FitInputError(exc.phrase.key, **exc.phrase.params) from None
        if not words:
            raise FitInputError("fit_err_which_model", [m.id for m in self.models.all()[:3]])
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

    def _build(self, model: ModelSpec, gpu: GPUSpec | None, count: int | None, opts: dict[str, Any]
               ) -> FitRequest:
        if count is not None:
            _bounded(count, 1, 64, "GPU count")
        mode = opts.pop("mode", "inference")
        if model.kind != "llm":
            mode = "inference"
        default_quant = "bf16"
        if model.native_quant and mode == "inference":
            default_quant = model.native_quant
        if model.kind == "asr":
            default_quant = "fp16"
        quant = opts.pop("quant", default_quant)
        if mode == "qlora":
            quant = "nf4"
        if model.kind == "diffusion" and quant not in DIFFUSION_QUANTS:
            raise FitInputError("fit_err_diffusion_quant", ["bf16", "fp8", "nf4"], quant=quant)
        if mode == "train" and quant not in ("bf16", "fp16", "fp32"):
            raise FitInputError("fit_err_train_quant", ["qlora", "lora", "train"], quant=quant)
        request = FitRequest(model=model, gpu=gpu, gpu_count=count or 1, mode=mode, quant=quant,
                             count_given=count is not None)
        return replace(request, **opts)


def _quant_suggestions(value: str) -> list[str]:
    from rapidfuzz import process

    from gpu.fit.quant import WEIGHT_FORMATS

    found = process.extract(normalize_name(value), list(WEIGHT_FORMATS), limit=3)
    return [name for name, score, _ in found if score >= 50]
