"""The issue-28 probes (the first merged into tests/eval/faithfulness.yaml as its `part: probe`, and the
held-out faithfulness_heldout.yaml written blind before the phrasings were measured on it, and the blind
faithfulness_blind.yaml and faithfulness_blind4.yaml to faithfulness_blind7.yaml, each written without the
phrasings file, the earlier probes or any answer): valid labelled
sets of new questions whose labels come from the glossary — its entries, read out verbatim, never trigger an
item's own must_not."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from dev.eval.faithfulness import FaithfulnessItem, load_faithfulness_set, score
from infra.settings import REPO_ROOT
from rag.glossary import load_glossary

HELDOUT = REPO_ROOT / "tests" / "eval" / "faithfulness_heldout.yaml"
BLIND = REPO_ROOT / "tests" / "eval" / "faithfulness_blind.yaml"
BLIND4 = REPO_ROOT / "tests" / "eval" / "faithfulness_blind4.yaml"
BLIND5 = REPO_ROOT / "tests" / "eval" / "faithfulness_blind5.yaml"
BLIND6 = REPO_ROOT / "tests" / "eval" / "faithfulness_blind6.yaml"
BLIND7 = REPO_ROOT / "tests" / "eval" / "faithfulness_blind7.yaml"
PROBE = REPO_ROOT / "tests" / "eval" / "faithfulness.yaml"  # its part: probe


def _probe(path: Path) -> list[FaithfulnessItem]:
    items = load_faithfulness_set(path).items if path != PROBE else load_faithfulness_set().items
    return [item for item in items if path != PROBE or item.part == "probe"]


@pytest.mark.parametrize("path", [PROBE, HELDOUT, BLIND, BLIND4, BLIND5, BLIND6, BLIND7],
                         ids=["probe", "heldout", "blind", "blind4", "blind5", "blind6", "blind7"])
def test_the_probe_is_a_valid_set_of_new_questions(path: Path) -> None:
    probe = _probe(path)
    assert len(probe) == 100 and len({item.id for item in probe}) == 100
    langs = Counter(item.lang for item in probe)
    assert langs["ru"] >= 50 and langs["en"] >= 40, langs
    # a held-out probe asks nothing the faithfulness set (its core and the merged probe) asks
    earlier = [item for item in load_faithfulness_set().items if path != PROBE or item.part == "core"]
    # and a blind probe nothing an earlier one asks
    order = [HELDOUT, BLIND, BLIND4, BLIND5, BLIND6, BLIND7]
    if path in order:
        earlier += [item for before in order[:order.index(path)] for item in load_faithfulness_set(before).items]
    known = {item.question.strip().lower() for item in earlier}
    assert not [item.id for item in probe if item.question.strip().lower() in known]


@pytest.mark.parametrize("path", [PROBE, HELDOUT, BLIND, BLIND4, BLIND5, BLIND6, BLIND7],
                         ids=["probe", "heldout", "blind", "blind4", "blind5", "blind6", "blind7"])
def test_the_glossary_never_contradicts_the_probes_labels(path: Path) -> None:
    glossary = load_glossary(REPO_ROOT / "data")
    for item in (i for i in _probe(path) if i.expect == "answer"):
        sources = [e for e in glossary if e.id in item.entries or e.concept in item.entries]
        assert sources, item.id
        verbatim = "\n".join(e.passage() for e in sources)
        assert not score(item, verbatim, sources, "answered").contradicted, item.id
