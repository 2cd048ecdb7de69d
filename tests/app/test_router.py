"""The semantic router: the bank file, nearest-neighbour scoring, the cache of the bank's vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.router import ROUTES, BankError, RouteBank, SemanticRouter, load_bank
from infra.settings import REPO_ROOT
from tests.rag.support import shared_retriever

BANK = REPO_ROOT / "data" / "routes.yaml"


def test_the_bank_covers_every_route_in_both_languages() -> None:
    bank = load_bank(BANK)
    assert set(bank.routes) == set(ROUTES)
    texts, _ = bank.labelled()
    assert len(texts) >= 800
    assert len({text.lower() for text in texts}) == len(texts), "duplicates in the bank"
    for route, utterances in bank.routes.items():
        cyrillic = sum(any("а" <= ch.lower() <= "я" for ch in text) for text in utterances)
        assert 0.25 <= cyrillic / len(utterances) <= 0.75, route


def test_a_malformed_bank_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "routes.yaml"
    path.write_text("version: 1\nroutes:\n  weather: ['is it sunny']\n", encoding="utf-8")
    with pytest.raises(BankError, match=r"routes\.yaml.*unknown routes \['weather'\]"):
        load_bank(path)
    path.write_text("version: 1\nroutes:\n  fit: []\n", encoding="utf-8")
    with pytest.raises(BankError, match="has no utterances"):
        load_bank(path)
    path.write_text("version: 1\nroutes:\n  fit:\n    - 'fits?'\n  quote:\n    - 'how much'\n    - ' '\n",
                    encoding="utf-8")
    with pytest.raises(BankError) as caught:
        load_bank(path)
    assert str(caught.value) == f"{path}, line 5: routes.quote: utterance #2 is empty"


def test_scores_rank_routes_by_their_nearest_utterances() -> None:
    bank = RouteBank(routes={"fit": ["a", "b"], "quote": ["c"]})
    vectors = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0]], dtype=np.float32)
    router = SemanticRouter(bank, vectors, neighbours=2)
    scores = router.score(np.array([1.0, 0.05], dtype=np.float32))
    assert scores.route == "fit" and scores.margin > 0.5
    assert scores.nearest == "a"
    assert scores.lead("quote") < 0


def test_bank_vectors_are_cached_by_content_and_embedder(tmp_path: Path) -> None:
    calls: list[int] = []

    def encode(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return np.eye(len(texts), 4, dtype=np.float32)

    bank = RouteBank(routes={"fit": ["a", "b"], "quote": ["c"]})
    SemanticRouter.build(bank, encode, "embedder-1", tmp_path)
    SemanticRouter.build(bank, encode, "embedder-1", tmp_path)
    assert calls == [3]
    SemanticRouter.build(bank, encode, "embedder-2", tmp_path)  # another embedder: other vectors
    assert calls == [3, 3]


@pytest.mark.long
def test_real_embedder_routes_customer_phrasings() -> None:
    """On multilingual e5 (the bot's embedder): messages not in the bank land on their route."""
    retriever = shared_retriever()
    assert retriever.embedder is not None
    router = SemanticRouter.build(load_bank(BANK), retriever.embedder.encode_queries, retriever.embedder.identity,
                                  None)
    cases = {
        "ку, есть кто живой?": "greeting",
        "благодарочка, выручил": "thanks",
        "а ты вообще что умеешь делать": "help",
        "какая завтра погода в казани": "off_topic",
        "what's the deal with paged attention, how does it save memory": "glossary",
    }
    for text, route in cases.items():
        assert router.score(retriever.embedder.encode_query(text)).route == route, text
