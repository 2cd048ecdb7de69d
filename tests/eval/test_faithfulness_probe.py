"""The issue-28 probes (tests/eval/faithfulness_probe.yaml, and the held-out faithfulness_heldout.yaml written
blind before the phrasings were measured on it): valid labelled sets of new questions whose labels come from
the glossary — its entries, read out verbatim, never trigger an item's own must_not."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from dev.eval.faithfulness import load_faithfulness_set, score
from infra.settings import REPO_ROOT
from rag.glossary import load_glossary

PROBE = REPO_ROOT / "tests" / "eval" / "faithfulness_probe.yaml"
HELDOUT = REPO_ROOT / "tests" / "eval" / "faithfulness_heldout.yaml"


@pytest.mark.parametrize("path", [PROBE, HELDOUT], ids=["probe", "heldout"])
def test_the_probe_is_a_valid_set_of_new_questions(path: Path) -> None:
    probe = load_faithfulness_set(path).items
    assert len(probe) == 100 and len({item.id for item in probe}) == 100
    langs = Counter(item.lang for item in probe)
    assert langs["ru"] >= 50 and langs["en"] >= 40, langs
    earlier = [load_faithfulness_set().items, *([load_faithfulness_set(PROBE).items] if path == HELDOUT else [])]
    known = {item.question.strip().lower() for items in earlier for item in items}
    assert not [item.id for item in probe if item.question.strip().lower() in known]


@pytest.mark.parametrize("path", [PROBE, HELDOUT], ids=["probe", "heldout"])
def test_the_glossary_never_contradicts_the_probes_labels(path: Path) -> None:
    glossary = load_glossary(REPO_ROOT / "data")
    for item in (i for i in load_faithfulness_set(path).items if i.expect == "answer"):
        sources = [e for e in glossary if e.id in item.entries or e.concept in item.entries]
        assert sources, item.id
        verbatim = "\n".join(e.passage() for e in sources)
        assert not score(item, verbatim, sources, "answered").contradicted, item.id
