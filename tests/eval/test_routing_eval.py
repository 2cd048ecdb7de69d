"""Routing floors on tests/eval/routing.yaml, a margin below what `anchorgpu bench routing` measured.

Quality only: the routing latency comes from the benchmark, never from tests.
"""

from __future__ import annotations

from collections import Counter

from app.pipeline import ReplyPipeline
from app.router import ROUTES
from dev.bench.routing import SLOT_KEYS, evaluate, load_items


def test_the_set_is_large_varied_and_labelled_with_known_routes() -> None:
    items = load_items()
    assert len(items) >= 400
    assert len({item.id for item in items}) == len(items) and len({item.text for item in items}) == len(items)
    parts = Counter(item.part for item in items)
    assert parts["heldout"] >= 100, parts
    routes = {"clarify", "refusal", "smalltalk", *ROUTES} - {"greeting", "thanks", "help", "complaint", "off_topic"}
    assert {item.route for item in items} <= routes
    langs = Counter("ru" if any("а" <= ch.lower() <= "я" for ch in item.text) else "en" for item in items)
    assert min(langs.values()) >= 0.35 * len(items), langs
    for item in items:
        if item.route == "clarify":
            assert item.slots.get("missing") in ("gpu", "duration", "model"), item.id
        assert set(item.slots) <= {"model", "gpus", "count", "hours", "pricing", "missing"}, item.id
        assert item.route in SLOT_KEYS or not item.slots, item.id


def test_routing_meets_its_floors(pipeline: ReplyPipeline) -> None:
    items = load_items()
    for part in ("dev", "heldout"):
        report = evaluate(pipeline, [item for item in items if item.part == part])
        summary = {key: report[key] for key in ("route_accuracy", "slot_exact_match", "confusion")}
        assert report["route_accuracy"] >= 0.93, (part, summary, report["misrouted"])
        assert report["slot_exact_match"] >= 0.90, (part, summary, report["slot_misses"])
