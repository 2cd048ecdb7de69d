"""`python -m anchorgpu.warm`, run by setup: the vectors a first answer would wait for land in the machine's
caches that every state folder reads, and a second run finds them there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import yaml

from infra.settings import RAGSettings
from rag.retrieval.english import PREFIX as ENGLISH
from rag.retrieval.phrasings import PREFIX as PHRASINGS
from tests.conftest import DATA_DIR, REPO_ROOT


def _warm(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "anchorgpu.warm"], env=env, cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=300, check=False)


def test_warm_fills_the_vector_cache_once(tmp_path: Path) -> None:
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR, data)
    phrasings_file = data / "glossary" / "phrasings.yaml"
    document = yaml.safe_load(phrasings_file.read_text(encoding="utf-8"))
    kept = dict(list(document["phrasings"].items())[:2])  # a small glossary of phrasings: quick to embed
    phrasings_file.write_text(yaml.safe_dump({"phrasings": kept}, allow_unicode=True), encoding="utf-8")
    vectors = tmp_path / "vectors"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RAG_", "ANCHORGPU_"))}
    env.update({"ANCHORGPU_DATA_DIR": str(data), "ANCHORGPU_STATE_DIR": str(tmp_path / "state"),
                "RAG_VECTOR_CACHE_DIR": str(vectors),
                "RAG_ROUTER_CACHE_DIR": str(RAGSettings().router_cache_dir),  # the machine's: the same bank
                "HF_HUB_OFFLINE": "1"})

    first = _warm(env)
    assert first.returncode == 0 and "[warm] ok" in first.stderr, first.stderr
    [english] = vectors.glob(f"{ENGLISH}*.npz")
    [phrasings] = vectors.glob(f"{PHRASINGS}*.npz")
    with np.load(phrasings) as archive:
        rows = len(archive["vectors"])
    assert rows >= sum(len(texts) for texts in kept.values())  # one row per (entry, phrasing of its concept)
    assert not (tmp_path / "state").exists(), "warming builds no state folder"

    again = _warm(env)
    assert again.returncode == 0, again.stderr
    assert sorted(vectors.iterdir()) == sorted([english, phrasings])
