"""The acceptance table of the /fit issue: each vendor's published "runs on one N GB GPU" claim for the
models people run now, checked against the fit verdict (default context and batch, the format the claim
names). Sources are the vendors' model cards and launch posts."""

from __future__ import annotations

import pytest

from tests.conftest import fit_service

FIT = fit_service()

# (request, fits, source)
CLAIMS = [
    ("gpt-oss-120b on 1x h100-sxm", True,
     "https://openai.com/index/introducing-gpt-oss/ — gpt-oss-120b runs on a single 80 GB GPU (MXFP4)"),
    ("gpt-oss-20b on rtx-4060-ti-16g", True,
     "https://openai.com/index/introducing-gpt-oss/ — gpt-oss-20b runs within 16 GB of memory"),
    ("llama-4-scout int4 on 1x h100-sxm", True,
     "https://ai.meta.com/blog/llama-4-multimodal-intelligence/ — Scout fits on a single H100 with Int4"),
    ("gemma-3-27b q4_0 on rtx-3090", True,
     "https://developers.googleblog.com/en/gemma-3-quantized-aware-trained-state-of-the-art-ai-to-consumer-gpus/"
     " — Gemma 3 27B int4 (QAT) on a single RTX 3090 24 GB"),
    ("gemma-3-27b bf16 on rtx-3090", False,
     "same post — 54 GB of BF16 weights do not fit 24 GB"),
    ("mistral-small-3.1-24b q4_k_m on rtx-4090", True,
     "https://mistral.ai/news/mistral-small-3-1 — runs on a single RTX 4090 (quantized)"),
]


@pytest.mark.parametrize(("request_text", "fits", "source"), CLAIMS, ids=[c[0] for c in CLAIMS])
def test_the_fit_verdict_agrees_with_the_vendor(request_text: str, fits: bool, source: str) -> None:
    result = FIT.fit(request_text)
    assert result.fits is fits, (source, result.per_gpu.total / 2**30, result.usable_bytes / 2**30)
