"""The /fit parser's notes: free-form customer questions give no "did not understand" noise; a name that
resolves to nothing (a model, a GPU, a quantization) is named, with "did you mean" where something is close."""

from __future__ import annotations

import pytest

from gpu.fit.request import FitInputError, RequestParser
from gpu.fit.service import FitService
from gpu.request_words import count_value, plural_tolerant
from tests.conftest import fit_service, notes_en

NAME_NOTES = ("fit_note_unknown_word", "fit_note_ignored")


@pytest.fixture(scope="module")
def service() -> FitService:
    return fit_service()


@pytest.fixture(scope="module")
def parser(service: FitService) -> RequestParser:
    return service.parser


# (question as a customer writes it, model id, GPU id or None, GPU count, extra request fields)
FREE_FORM = [
    ("Хватит ли одной H100 чтобы дообучить llama 3 8b с LoRA?", "llama-3-8b", "h100-sxm", 1, {"mode": "lora"}),
    ("can I run deepseek-r1 671b on 8x H200?", "deepseek-r1", "h200", 8, {}),
    ("Можно ли запустить Stable Diffusion XL на RTX 4090?", "sdxl", "rtx-4090", 1, {}),
    ("потянет ли 3090 qwen 32b?", "qwen2.5-32b", "rtx-3090", 1, {}),
    ("a100 40gb или 80gb для llama 13b fp16?", "custom-13b", "a100-40gb", 1, {"quant": "fp16"}),
    ("will llama 70b fit on two a100s for inference with 32k context", "llama-3.3-70b", "a100-80gb", 2,
     {"context": 32768, "mode": "inference"}),
    ("запустится ли mixtral на паре 4090 в 4 бита", "mixtral-8x7b", "rtx-4090", 2, {"quant": "nf4"}),
    ("will mixtral run on a pair of 4090s?", "mixtral-8x7b", "rtx-4090", 2, {}),
    ("can I serve qwen2.5-7b on a single L4 using vllm", "qwen2.5-7b", "l4", 1, {}),
    ("is one h100 enough to fine-tune llama 3.1 8b with qlora", "llama-3.1-8b", "h100-sxm", 1,
     {"mode": "qlora"}),
    ("хватит ли моей 4090 для qwen3-8b", "qwen3-8b", "rtx-4090", 1, {}),
    ("запустить llama 3.1 70b на четырёх a100 с контекстом 32k", "llama-3.1-70b", "a100-80gb", 4,
     {"context": 32768}),
    ("на 4-х картах H100 поместится llama 405b в fp8?", "llama-3.1-405b", "h100-sxm", 4, {"quant": "fp8"}),
    ("does flux dev work on a 3090", "flux.1-dev", "rtx-3090", 1, {}),
    ("можно ли обучить llama-3.2-3b на двух 4090", "llama-3.2-3b", "rtx-4090", 2, {"mode": "train"}),
    ("a100 80gb для файнтюна llama 13b?", "custom-13b", "a100-80gb", 1, {"mode": "train"}),
    ("two h100s for llama 3.3 70b q4?", "llama-3.3-70b", "h100-sxm", 2, {"quant": "q4_k_m"}),
    ("поднять qwen2.5-72b на восьми h100 для 20 пользователей", "qwen2.5-72b", "h100-sxm", 8, {"batch": 20}),
    ("will deepseek r1 run on a couple of h200s", "deepseek-r1", "h200", 2, {}),
    ("dual 3090 for llama 70b 4-bit", "llama-3.3-70b", "rtx-3090", 2, {"quant": "nf4"}),
    ("хочу дообучить qwen2.5-7b с лорой на одной 4090, получится?", "qwen2.5-7b", "rtx-4090", 1,
     {"mode": "lora"}),
    ("Can I fine-tune mistral 7b with QLoRA on a T4?", "mistral-7b", "t4", 1, {"mode": "qlora"}),
    ("Подойдёт ли моя RTX 3090 для запуска gemma 2 9b?", "gemma-2-9b", "rtx-3090", 1, {}),
    ("run qwen3 32b in q4_k_m on two 3090s please", "qwen3-32b", "rtx-3090", 2, {"quant": "q4_k_m"}),
    ("нужно развернуть mixtral 8x22b, хватит ли восьми a100 80gb?", "mixtral-8x22b", "a100-80gb", 8, {}),
    ("would flux schnell run on my 3060 12gb", "flux.1-schnell", "rtx-3060-12gb", 1, {}),
    ("llama-3.1-8b inference on a single A10G, batch 8, context 8k", "llama-3.1-8b", "a10g", 1,
     {"batch": 8, "context": 8192}),
    ("Потянет ли пара H100 обучение llama 3.1 8b полностью?", "llama-3.1-8b", "h100-sxm", 2, {"mode": "train"}),
    ("Will qwen 2.5 72b fit on 4x L40S with 32k context and fp8 kv cache?", "qwen2.5-72b", "l40s", 4,
     {"context": 32768}),
    ("can gpt-oss 20b work on a 16gb card like 4060 ti?", "gpt-oss-20b", "rtx-4060-ti-16gb", 1, {}),
    ("Запущу ли я gemma 3 27b на двух картах 4090?", "gemma-3-27b", "rtx-4090", 2, {}),
    ("Is a single h200 enough for llama 4 scout in int4?", "llama-4-scout", "h200", 1, {"quant": "awq"}),
    ("mixtral on 2x a100 40gb in 4-bit, will it work?", "mixtral-8x7b", "a100-40gb", 2, {"quant": "nf4"}),
    ("can I serve llama 3.3 70b to 50 users on four h100", "llama-3.3-70b", "h100-sxm", 4, {"batch": 50}),
    ("serve llama 3.3 70b to ~50 users on four h100", "llama-3.3-70b", "h100-sxm", 4, {"batch": 50}),
    ("обучить qwen3-4b на a100 с батчем 16 и контекстом 4096", "qwen3-4b", "a100-80gb", 1,
     {"mode": "train", "batch": 16, "context": 4096}),
    ("Is it possible to run glm 4.5 air on 2 h100 using vllm?", "glm-4.5-air", "h100-sxm", 2, {}),
    ("will llama 3.1 8b fit on an h100 for 2 weeks of serving", "llama-3.1-8b", "h100-sxm", 1, {}),
    ("what gpu do I need to run gemma 27b?", "gemma-2-27b", None, 1, {}),
    ("Какая видеокарта нужна для stable diffusion 1.5?", "sd-1.5", None, 1, {}),
    # the verb with its prefixes: a job to train, not a model to serve
    ("сколько гпу надо чтобы зафайнтюнить llama 70b", "llama-3.3-70b", None, 1, {"mode": "train"}),
    ("хочу дотренировать qwen 7b на своих данных на a100", "qwen2.5-7b", "a100-80gb", 1, {"mode": "train"}),
    ("файнтюню mistral 7b на одной 4090, хватит?", "mistral-7b", "rtx-4090", 1, {"mode": "train"}),
    ("запустить мою зафайнтюненную llama 3.1 8b на 4090", "llama-3.1-8b", "rtx-4090", 1, {"mode": "inference"}),
]


@pytest.mark.parametrize(("text", "model", "gpu", "count", "extra"), FREE_FORM)
def test_free_form_questions_parse_without_notes(parser: RequestParser, text: str, model: str,
                                                 gpu: str | None, count: int, extra: dict[str, object]) -> None:
    parsed = parser.parse(text)
    request = parsed.request
    assert request.model.id == model
    assert (request.gpu.id if request.gpu else None) == gpu
    assert request.gpu_count == count
    for key, value in extra.items():
        assert getattr(request, key) == value, key
    assert parsed.unknown == []
    assert parsed.notes(parser) == []


def test_free_form_answers_carry_no_word_notes(service: FitService) -> None:
    for text, *_ in FREE_FORM[:8]:
        assert not [note for note in service.fit(text).notes if note.key in NAME_NOTES], text


# (question, the unknown name the note must quote, a "did you mean" it must offer or None)
UNKNOWN_NAMES = [
    ("llama-3.1-70b on 2 h100, or llama-9-70b?", "llama-9-70b", "llama-3.1-70b"),
    ("qwen2.5-7b on h100 or h300", "h300", "h200"),
    ("llama-3.1-70b on rtx 5070 ti super", "rtx 5070 ti super", None),
    ("llama-3.1-8b q5_k_xl на 4090", "q5_k_xl", None),
    ("deepseek-r1 fp4_xl on 8x h200", "fp4_xl", None),
    ("qwen3-8b int3 на 4090", "int3", "int4"),
    ("llama 3 8b on h100 with nf5", "nf5", "nf4"),
    ("llama-3.1-8b on 4090 vs rtx5070", "rtx5070", "rtx-5090"),
    ("влезет ли qwen2.5-7b в 4090 или rtx 5080 super", "rtx 5080 super", None),
    ("mistral 7b on a100 with gemma-9 draft", "gemma-9", "gemma-2-9b"),
    ("mistral 7b on my laptop 4060?", "4060", "rtx-4060-ti-16gb"),
    ("llama-3.1-8b on h100 or gtx 1080", "gtx 1080", None),
    ("qwen3-8b на 4090 с llama-guard", "llama-guard", None),
    ("llama-3.1-8b h100 lroa", "lroa", "lora"),
]


@pytest.mark.parametrize(("text", "name", "suggestion"), UNKNOWN_NAMES)
def test_unknown_names_are_reported(parser: RequestParser, text: str, name: str, suggestion: str | None) -> None:
    parsed = parser.parse(text)
    assert name in parsed.unknown
    notes = parsed.notes(parser)
    assert len(notes) == 1
    rendered = [note.render("en") for note in notes] + [note.render("ru") for note in notes]
    assert all(name in text for text in rendered)
    if suggestion is not None:
        assert notes[0].key == "fit_note_unknown_word" and suggestion in notes[0].params["options"]


def test_a_name_with_nothing_close_is_said_plainly(service: FitService) -> None:
    notes = notes_en(service.fit("llama-3.1-8b h100 zx9000"))
    assert any("zx9000" in note and "ignored" in note for note in notes)


@pytest.mark.parametrize(("text", "name"), [("llama-3.1-8b on a h300", "h300"), ("llama 8b on rtx5070", "rtx5070")])
def test_an_unknown_gpu_with_no_other_gpu_is_an_error_naming_it(parser: RequestParser, text: str,
                                                                 name: str) -> None:
    with pytest.raises(FitInputError) as info:
        parser.parse(text)
    assert info.value.phrase.key == "fit_err_unknown_gpu" and info.value.phrase.params["name"] == name
    assert info.value.suggestions


@pytest.mark.parametrize("word", ["h300", "rtx5070", "q5_k_xl", "llama-5", "gemma-9", "int3", "fp4_xl", "nf5",
                                  "5070", "llama-guard", "deepseek-coder", "qwen4", "н300", "lroa", "mixtrall"])
def test_looks_like_a_name(parser: RequestParser, word: str) -> None:
    assert parser.looks_like_name(word)


@pytest.mark.parametrize("word", [
    "чтобы", "дообучить", "запустится", "потянет", "моей", "пару", "паре", "одной", "двух", "четыре", "with",
    "using", "context", "serve", "work", "fine-tuned", "zebra", "llama", "llamas", "fill", "server", "users",
    "80gb", "32k", "24гб", "1080p", "4-х", "x4", "4x", "671b", "2048", "1000", "20", "3.1", "2025", "?", "😀",
])
def test_ordinary_words_numbers_and_measures_are_not_names(parser: RequestParser, word: str) -> None:
    assert not parser.looks_like_name(word)


@pytest.mark.parametrize(("word", "count"), [
    ("одной", 1), ("одну", 1), ("две", 2), ("двух", 2), ("пару", 2), ("паре", 2), ("парой", 2), ("трёх", 3),
    ("четыре", 4), ("четырьмя", 4), ("восьми", 8), ("two", 2), ("eight", 8), ("4-х", 4), ("8-ми", 8),
    ("10,000", 10_000), ("-3", -3), ("9" * 40, 10 ** 18),
])
def test_count_words_by_class(word: str, count: int) -> None:
    assert count_value(word) == count


@pytest.mark.parametrize("word", ["pair", "couple", "dual", "a"])
def test_weak_count_words_count_only_before_a_gpu(word: str) -> None:
    assert count_value(word) is None and count_value(word, weak=True) is not None


def test_plural_and_case_endings_of_gpu_names(parser: RequestParser) -> None:
    find = plural_tolerant(parser.gpus.find)
    for spelling, gpu in (("a100s", "a100-80gb"), ("4090s", "rtx-4090"), ("h100's", "h100-sxm"),
                          ("4090-х", "rtx-4090"), ("l40s", "l40s")):
        spec = find(spelling)
        assert spec is not None and spec.id == gpu, spelling
    assert find("zebras") is None


def test_method_beats_generic_training_in_any_order(parser: RequestParser) -> None:
    for text in ("fine-tune llama 3.1 8b with qlora on h100", "qlora fine-tune llama 3.1 8b on h100"):
        assert parser.parse(text).request.mode == "qlora"
    assert parser.parse("run my fine-tuned llama 3.1 8b on a 4090").request.mode == "inference"
