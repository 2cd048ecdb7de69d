"""The issue-28 probe (tests/eval/faithfulness_probe.yaml): a valid labelled set whose labels come from the
glossary — its entries, read out verbatim, never trigger an item's own must_not."""

from __future__ import annotations

from collections import Counter

from dev.eval.faithfulness import load_faithfulness_set, score
from infra.settings import REPO_ROOT
from rag.glossary import load_glossary

PROBE = REPO_ROOT / "tests" / "eval" / "faithfulness_probe.yaml"


def test_the_probe_is_a_valid_set_of_new_questions() -> None:
    probe = load_faithfulness_set(PROBE).items
    assert len(probe) == 100 and len({item.id for item in probe}) == 100
    langs = Counter(item.lang for item in probe)
    assert langs["ru"] >= 50 and langs["en"] >= 40, langs
    known = {item.question.strip().lower() for item in load_faithfulness_set().items}
    assert not [item.id for item in probe if item.question.strip().lower() in known]


def test_the_glossary_never_contradicts_the_probes_labels() -> None:
    glossary = load_glossary(REPO_ROOT / "data")
    for item in (i for i in load_faithfulness_set(PROBE).items if i.expect == "answer"):
        sources = [e for e in glossary if e.id in item.entries or e.concept in item.entries]
        assert sources, item.id
        verbatim = "\n".join(e.passage() for e in sources)
        assert not score(item, verbatim, sources, "answered").contradicted, item.id
