"""`anchorgpu bench routing`: the reply pipeline's routing on ``tests/eval/routing.yaml``.

Prints one JSON object per part of the set (``dev``: written before the router worked; ``heldout``:
written after, from the classes, never from its failures) and for the whole: route accuracy, slot exact
match (on the items that list slots, over the slots their route uses), the clarification rate, accuracy by
class, the confusion between routes, the misrouted items, and the routing latency p50/p95 — "beyond
retrieval" with the message's embedding already computed (retrieval computes it for every message anyway),
and "with embedding" from a cold query cache.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.pipeline import ReplyPipeline
from app.services import Services
from dev.bench._report import add_out_argument, emit
from infra.settings import REPO_ROOT, get_settings
from infra.yamlfile import Text, YamlFileError, read_yaml, validate

EVAL_FILE = REPO_ROOT / "tests" / "eval" / "routing.yaml"
# the slots each route's reply uses; an item is compared on these only
SLOT_KEYS: dict[str, tuple[str, ...]] = {
    "fit": ("model", "gpus", "count"),
    "quote": ("gpus", "count", "hours", "pricing"),
    "clarify": ("gpus", "count", "hours", "missing"),
    "compare": ("gpus",),
    "spec": ("gpus",),
    "price": ("gpus",),
}


@dataclass(frozen=True)
class RoutingItem:
    id: str
    text: str
    route: str
    cls: str
    part: str
    slots: dict[str, Any] = field(default_factory=dict)


class _Slots(BaseModel):
    """What a reply of the item's route must have read from the text (the keys of :data:`SLOT_KEYS`)."""

    model_config = ConfigDict(extra="forbid")

    model: Any = None
    gpus: Any = None
    count: Any = None
    hours: Any = None
    pricing: Any = None
    missing: Literal["gpu", "duration", "model"] | None = None


class _Item(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: Annotated[Text, Field(min_length=1)]
    text: Text
    route: str
    cls: Annotated[str, Field(alias="class")]
    part: Literal["dev", "heldout"] = "dev"
    slots: _Slots | None = None
    repeat: Annotated[int, Field(ge=1)] | None = None  # the text repeated up to this many characters


class _RoutingSet(BaseModel):
    model_config = ConfigDict(extra="forbid")

    items: list[_Item]


def load_items(path: Path = EVAL_FILE) -> list[RoutingItem]:
    """The routing set; a malformed item raises :class:`YamlFileError` naming the file, line and field."""
    document = read_yaml(path)
    raw_items = validate(_RoutingSet, document).items
    items = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(raw_items):
        if raw.id in seen:
            raise YamlFileError(f"{document.where(('items', index, 'id'))}: duplicate id {raw.id!r} "
                                f"(first at line {document.line(('items', seen[raw.id], 'id'))})")
        seen[raw.id] = index
        text = raw.text
        if raw.repeat:
            text = (text * (raw.repeat // max(1, len(text)) + 1))[: raw.repeat]
        slots = {} if raw.slots is None else raw.slots.model_dump(exclude_unset=True)
        items.append(RoutingItem(raw.id, text, raw.route, raw.cls, raw.part, slots))
    return items


def found_slots(pipeline: ReplyPipeline, item: RoutingItem) -> tuple[str, dict[str, Any]]:
    decision, slots, _ = pipeline.route(item.text)
    found = slots.to_json()
    if decision.missing:
        found["missing"] = decision.missing
    return decision.route, found


def slot_match(item: RoutingItem, found: dict[str, Any]) -> bool:
    keys = SLOT_KEYS.get(item.route, ())
    return all(_same(item.slots.get(key), found.get(key)) for key in keys)


def _same(expected: Any, found: Any) -> bool:
    if isinstance(expected, list) or isinstance(found, list):
        return list(expected or []) == list(found or [])
    if expected is None or found is None:
        return expected is None and found is None
    return str(expected).lower() == str(found).lower()


def evaluate(pipeline: ReplyPipeline, items: list[RoutingItem]) -> dict[str, Any]:
    routed: list[tuple[RoutingItem, str, dict[str, Any]]] = []
    for item in items:
        route, found = found_slots(pipeline, item)
        routed.append((item, route, found))
    correct = [route == item.route for item, route, _ in routed]
    with_slots = [(item, found) for item, route, found in routed if item.route in SLOT_KEYS and route == item.route]
    slot_items = [item for item, _, _ in routed if item.route in SLOT_KEYS]
    slot_ok = sum(slot_match(item, found) for item, found in with_slots)
    by_class: dict[str, list[bool]] = defaultdict(list)
    confusion: Counter[str] = Counter()
    misrouted = []
    slot_misses = []
    for (item, route, found), ok in zip(routed, correct, strict=True):
        by_class[item.cls].append(ok)
        if not ok:
            confusion[f"{item.route} -> {route}"] += 1
            misrouted.append({"id": item.id, "text": item.text[:120], "expected": item.route, "got": route})
        elif item.route in SLOT_KEYS and not slot_match(item, found):
            slot_misses.append({"id": item.id, "text": item.text[:120], "expected": item.slots, "got": found})
    return {
        "items": len(items),
        "route_accuracy": round(sum(correct) / len(items), 4) if items else None,
        "slot_exact_match": round(slot_ok / len(slot_items), 4) if slot_items else None,
        "clarification_rate": round(sum(route == "clarify" for _, route, _ in routed) / len(items), 4)
        if items else None,
        "by_class": {name: round(sum(oks) / len(oks), 3) for name, oks in sorted(by_class.items())},
        "confusion": dict(confusion.most_common()),
        "misrouted": misrouted,
        "slot_misses": slot_misses,
    }


def latency(pipeline: ReplyPipeline, items: list[RoutingItem], services: Services) -> dict[str, float]:
    texts = [item.text for item in items]
    retriever = services.retriever
    cold: list[float] = []
    warm: list[float] = []
    for text in texts:
        if retriever is not None:
            retriever.clear_query_cache()
        started = time.perf_counter()
        pipeline.route(text)
        cold.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()  # the embedding is cached now, as after retrieval
        pipeline.route(text)
        warm.append((time.perf_counter() - started) * 1000)
    return {"beyond_retrieval_p50_ms": _pct(warm, 50), "beyond_retrieval_p95_ms": _pct(warm, 95),
            "with_embedding_p50_ms": _pct(cold, 50), "with_embedding_p95_ms": _pct(cold, 95)}


def _pct(values: list[float], q: int) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))], 2)


async def _run(args: argparse.Namespace) -> dict[str, Any]:
    services = Services.create(get_settings())
    try:
        await services.ensure_retriever()  # its query-vector cache: "beyond retrieval" reuses the embedding
        pipeline = services.pipeline
        items = load_items(Path(args.file))
        parts = sorted({item.part for item in items})
        report: dict[str, Any] = {"set": str(args.file), "semantic_router": pipeline.router is not None}
        for part in parts:
            report[part] = evaluate(pipeline, [item for item in items if item.part == part])
        report["all"] = evaluate(pipeline, items)
        if not args.verbose:
            for part in (*parts, "all"):
                report[part].pop("misrouted")
                report[part].pop("slot_misses")
        report["latency"] = latency(pipeline, items, services)
        report["latency"]["median_of_all_ms"] = round(statistics.median(
            [_timed(pipeline, item.text) for item in items]), 2)
        return report
    finally:
        await services.aclose()


def _timed(pipeline: ReplyPipeline, text: str) -> float:
    started = time.perf_counter()
    pipeline.route(text)
    return (time.perf_counter() - started) * 1000


def run(args: argparse.Namespace) -> int:
    report = asyncio.run(_run(args))
    emit("routing", report, args.out)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("routing", help="route accuracy, slots and latency of the reply pipeline")
    parser.add_argument("--file", default=str(EVAL_FILE), help="the evaluation set (YAML)")
    parser.add_argument("--verbose", action="store_true", help="list the misrouted items and slot misses")
    add_out_argument(parser)
    parser.set_defaults(handler=run)
