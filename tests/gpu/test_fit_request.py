"""Free-text /fit requests (RU/EN, any order) and 10,000 random requests that never raise unexpectedly."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.views.fit import result_json
from gpu.fit.request import FitInputError
from gpu.fit.service import FitService
from tests.conftest import fit_service, notes_en

RANDOM_REQUESTS = 10_000


@pytest.fixture(scope="module")
def service() -> FitService:
    return fit_service()


@pytest.mark.parametrize(("text", "model", "gpu", "count", "extra"), [
    ("llama-3.1-70b q4_k_m 2xH100 ctx=32k batch=4", "llama-3.1-70b", "h100-sxm", 2,
     {"quant": "q4_k_m", "context": 32768, "batch": 4}),
    ("qwen2.5-7b на 4090", "qwen2.5-7b", "rtx-4090", 1, {}),
    ("влезет ли mixtral в две A100?", "mixtral-8x7b", "a100-80gb", 2, {}),
    ("2 x A100-40GB llama 3.1 8b ctx 16k", "llama-3.1-8b", "a100-40gb", 2, {"context": 16384}),
    ("h100x4 deepseek-r1 fp8 kv=fp8", "deepseek-r1", "h100-sxm", 4, {"quant": "fp8", "kv_dtype": "fp8"}),
    ("mixtral 8x7b on mi300x", "mixtral-8x7b", "mi300x", 1, {}),
    ("qwen3-8b qlora r=64 seq=4096 l40s", "qwen3-8b", "l40s", 1,
     {"mode": "qlora", "lora_rank": 64, "context": 4096, "quant": "nf4"}),
    ("llama-3.1-8b train zero3 8xh100 adam8bit no-gc", "llama-3.1-8b", "h100-sxm", 8,
     {"mode": "train", "parallel": "zero3", "optimizer": "adam8bit", "grad_checkpointing": False}),
    ("llama-3.1-70b tp=4 a100", "llama-3.1-70b", "a100-80gb", 4, {"parallel": "tp"}),
    ("Llama 3.1 70B pp2 на восьми H200", "llama-3.1-70b", "h200", 2, {"parallel": "pp"}),
    ("sdxl 4 images 1024x1024 tiling на 4090", "sdxl", "rtx-4090", 1,
     {"images": 4, "resolution": 1024, "vae_tiling": True}),
    ("поместится ли gemma 9b с контекстом 8k на L4", "gemma-2-9b", "l4", 1, {"context": 8192}),
])
def test_parse_examples(service: FitService, text: str, model: str, gpu: str, count: int,
                        extra: dict[str, object]) -> None:
    request = service.parser.parse(text).request
    assert request.model.id == model
    assert request.gpu is not None and request.gpu.id == gpu
    assert request.gpu_count == count
    for key, value in extra.items():
        assert getattr(request, key) == value, key


@pytest.mark.parametrize("text", ["llama 3 8b на 3060 выдаёт 5 токенов в секунду, это нормально?",
                                  "mistral 7b on a 4090 only gives 30 tokens per second"])
def test_a_speed_in_tokens_per_second_is_not_a_context(service: FitService, text: str) -> None:
    assert service.parser.parse(text).request.context == service.parser.parse("llama 3 8b на 3060").request.context


@pytest.mark.parametrize("text", ["how many a100s do i need to fine tune llama 70b with full fine tuning",
                                  "fine tune llama 70b on a100"])
def test_fine_tune_written_as_two_words_is_training(service: FitService, text: str) -> None:
    assert service.parser.parse(text).request.mode == "train"


def test_size_only_model(service: FitService) -> None:
    request = service.parser.parse("13b q4_k_m на 4090").request
    assert request.model.estimated and request.model.params == 13_000_000_000
    result = service.fit("13b q4_k_m на 4090")
    assert any("estimated" in note for note in notes_en(result))


def test_a_family_name_with_a_size_it_does_not_have_is_the_size_not_the_family_default(
        service: FitService) -> None:
    """"mistral nemo 12b": the catalog's "mistral" is the 7B; computing the 7B would answer another model."""
    request = service.parser.parse("mistral nemo 12b on rtx-3090").request
    assert request.model.estimated and request.model.params == 12_000_000_000
    assert service.parser.parse("mistral 7b on rtx-3090").request.model.id == "mistral-7b"
    assert service.parser.parse("mistral on l4").request.model.id == "mistral-7b"


@pytest.mark.parametrize(("text", "model"), [
    ("llama-8b", "llama-3.1-8b"), ("qwen-32b on 4090", "qwen2.5-32b"), ("/fit mistral-7b l4", "mistral-7b")])
def test_a_family_and_size_written_as_one_word(service: FitService, text: str, model: str) -> None:
    assert service.parser.parse(text).request.model.id == model


@pytest.mark.parametrize("text", ["deepseek r1 full on 8x h200 — fits?", "full deepseek-r1 on 8 h200",
                                  "can the full llama 70b run on 2 h100", "/fit llama 8b full"])
def test_the_full_model_is_not_a_training_run(service: FitService, text: str) -> None:
    """"the full R1" is the model, not its distilled variants: asked about running it, it is inference; a
    training run takes a training word ("full finetune", «обучить»)."""
    assert service.parser.parse(text).request.mode == "inference"
    assert service.parser.parse("llama 8b full finetune on 4090").request.mode == "train"


@pytest.mark.parametrize(("text", "message", "suggestion"), [
    ("lama-3.1-70b on h100", "Unknown model", "llama-3.1-70b"),
    ("qwen2.5-7b on h1000", "Unknown GPU", "h100-sxm"),
    ("qwen2.5-7b on h1000", "Unknown GPU", "h100-sxm"),  # the V100 is in the spec catalog now
    ("mixtrall 2xa100", "Unknown model", "mixtral-8x7b"),
    ("llama-3.1-8b quant=q4_k_n", "Unknown quantization", "q4_k_m"),
    ("llama-3.1-8b kv=q5", "Unknown KV cache type", "fp8"),
    ("llama-3.1-8b ctx=abc", "not a number", None),
    ("llama-3.1-8b ctx=99999999999", "between", None),
    ("llama-3.1-8b 100xh100", "between", None),
    ("", "Usage", None),
    ("on h100", "Which model", None),
    ("llama-3.1-8b colour=blue", "Unknown option", None),
    ("llama-3.1-8b q4_k_m train", "Full training keeps weights in bf16", "qlora"),
    # a version of a family the catalog lacks is never sized as the version it has
    ("stable diffusion 3.5 large on a 3060", "'stable diffusion 3.5' is not in the model catalog", "sdxl"),
    ("flux 2 on 4090", "'flux 2' is not in the model catalog", "flux.1-dev"),
    ("llama 2 on a100", "Unknown model 'llama 2'", None),
    ("mistral large 2 on 4 a100 80gb", "'mistral large 2' is not in the model catalog", None),
    ("sdxl turbo on 4090", "'sdxl turbo' is not in the model catalog", None),
])
def test_useful_errors(service: FitService, text: str, message: str, suggestion: str | None) -> None:
    with pytest.raises(FitInputError) as info:
        service.fit(text)
    assert message in info.value.message
    if suggestion is not None:
        assert suggestion in info.value.suggestions


WORDS = ["llama-3.1-70b", "qwen2.5-7b", "mixtral", "deepseek-r1", "sdxl", "whisper", "flux.1-dev", "13b",
         "0.5b", "q4_k_m", "fp8", "awq", "nf4", "bf16", "2xH100", "h100x8", "4090", "a100", "mi300x", "две",
         "на", "в", "ctx=32k", "ctx=0", "batch=4", "kv=fp8", "kv=q4_0", "tp=2", "pp=4", "lora", "qlora",
         "train", "zero3",
         "fsdp", "ddp", "r=64", "images=4", "1024x1024", "tiling", "util=0.9", "влезет", "ли", "?", "lama",
         "h1000", "x", "×", "8x7b", "128k", "ctx", "seq=4096", "beam=5", "prefill=512", "gpus=3", "adam8bit"]


@pytest.mark.long
@settings(max_examples=RANDOM_REQUESTS, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join),
    st.text(max_size=80),
    st.lists(st.one_of(st.sampled_from(WORDS), st.text(max_size=8)), max_size=6).map(" ".join),
))
def test_random_requests_never_crash(text: str) -> None:
    service = _SERVICE
    try:
        request = service.parser.parse(text).request
    except FitInputError as exc:
        assert exc.message.strip()
        assert len(exc.message) < 400
        assert all(isinstance(s, str) and s for s in exc.suggestions)
        return
    assert request.model is not None and 1 <= request.gpu_count <= 64


_SERVICE = fit_service()


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=8).map(" ".join))
def test_random_requests_evaluate(text: str) -> None:
    try:
        result = _SERVICE.fit(text)
    except FitInputError as exc:
        assert exc.message.strip()
        return
    payload = result_json(result)
    assert payload["per_gpu_gib"] >= 0 and payload["usable_per_gpu_gib"] > 0
    assert payload["fits"] == (payload["per_gpu_gib"] <= payload["usable_per_gpu_gib"] + 0.01)


@pytest.mark.parametrize(("text", "name"), [("gpt-4", "gpt-4"), ("gpt-4o on 8 h100", "gpt-4o"),
                                            ("claude 3.5 sonnet 2x h100", "claude 3.5 sonnet"),
                                            ("gemini pro", "gemini pro"), ("chatgpt on a100", "chatgpt")])
def test_a_closed_model_is_said_to_have_nothing_to_size_with_open_ones_to_check(
        service: FitService, text: str, name: str) -> None:
    with pytest.raises(FitInputError) as raised:
        service.parser.parse(text)
    assert raised.value.phrase.key == "fit_err_closed_model" and raised.value.phrase.params["name"] == name
    assert all(service.parser.parse(open_model).request.model.id == open_model
               for open_model in raised.value.suggestions)


@pytest.mark.parametrize("text", ["gpt-oss-120b on 2 h100", "gemma 9b on l4"])
def test_open_models_named_like_closed_ones_are_sized(service: FitService, text: str) -> None:
    assert service.parser.parse(text).request.model is not None


def test_a_diffusion_model_that_does_not_fit_is_offered_a_smaller_weight_format(service: FitService) -> None:
    """FLUX.1 [dev] in BF16 does not fit a 24 GB card; in a 4-bit format it does (as diffusers and ComfyUI load
    it), and the reply says so instead of only "no number of these GPUs"."""
    result = service.fit("flux на 4090")
    assert not result.fits
    quant = [s for s in result.suggestions if s.kind == "quant"]
    assert quant and quant[0].fits and quant[0].value in ("fp8", "nf4")
    assert service.fit(f"flux {quant[0].value} на 4090").fits


@pytest.mark.parametrize("text", ["обучить lora на sdxl на 4090", "train whisper large v3 on an a100"])
def test_training_asked_of_a_model_whose_training_is_not_computed_is_said_first(service: FitService,
                                                                               text: str) -> None:
    """Training memory is computed for language models only: a LoRA of SDXL gets the memory to generate with it,
    and the first note says so (the figures are not the training's)."""
    result = service.fit(text)
    assert result.request.mode == "inference" and result.request.training_asked
    assert result.notes[0].key == "fit_note_training_llm_only"
    assert not service.fit("sdxl на 4090").request.training_asked


@pytest.mark.parametrize(("text", "other"), [("потянет ли a100 40gb whisper large v3 и llama 8b одновременно?", "8B"),
                                             ("qwen 2.5 32b или llama 3 70b на 2 h100?", "70B")])
def test_a_second_model_named_is_said_not_to_be_counted(service: FitService, text: str, other: str) -> None:
    parsed = service.parser.parse(text)
    assert parsed.other_model is not None and other in parsed.other_model
    assert parsed.notes(service.parser)[0].key == "fit_note_other_model"
    assert service.parser.parse("llama 3 70b на 2 h100").other_model is None  # one model: no such note


@pytest.mark.parametrize(("text", "gpu"), [("у меня 2 a100 по 40, влезет mixtral?", "a100-40gb"),
                                           ("2 a100 по 40 гб, влезет mixtral?", "a100-40gb"),
                                           ("mixtral на 2 a100 по 80", "a100-80gb")])
def test_the_memory_of_each_card_said_after_po_picks_the_variant(service: FitService, text: str, gpu: str) -> None:
    # «по 40» is 40 GB each: on the 80 GB A100 Mixtral had been shown to fit two 40 GB cards
    request = service.parser.parse(text).request
    assert request.gpu is not None and request.gpu.id == gpu and request.gpu_count == 2


def test_a_time_after_po_is_no_memory(service: FitService) -> None:
    assert service.parser.parse("llama 8b на h100 по 80 часов").request.gpu.id == "h100-sxm"  # type: ignore[union-attr]


@pytest.mark.parametrize(("text", "model"), [("sdxl 2 images on 4090", "sdxl"), ("sd 1.5 on a 3060", "sd-1.5"),
                                             ("stable diffusion on 4090", "sdxl"), ("qwen 3 32b on h100", "qwen3-32b"),
                                             ("flux dev on 4090", "flux.1-dev"),
                                             # a family, a version and a size: the catalog's model of that size
                                             ("llama 3 405b on 8 h100", "llama-3.1-405b"),
                                             # a tier the catalog's model of the family has is that model
                                             ("mistral small on 4090", "mistral-small-3.1-24b"),
                                             ("whisper large v3 on l4", "whisper-large-v3")])
def test_a_count_or_a_version_the_catalog_has_is_not_another_version(service: FitService, text: str,
                                                                      model: str) -> None:
    assert service.fit(text).request.model.id == model
