"""`anchorgpu bench quote`: quote computation vs a stored quote round trip, side by side in one run.

Prints one JSON object (milliseconds; median / p95 / max):

* ``compute``: the pure engine (``compute_quote``) on a fixed mix of parsed requests (on-demand, spot,
  committed up to a year, whose term search is the slowest path); ``parse_and_compute`` adds text parsing.
* ``store_new``: a new quote with a fresh idempotency key through ``QuoteService.issue`` on a temporary
  SQLite file: key lookup, compute, one transaction inserting the quote and the key.
* ``store_replay``: the same key and request again: one indexed read, the original quote returned.
* ``read_back``: ``QuoteService.get`` of a stored quote by id.
* ``rent``: a simulated placement from that stored quote with a fresh key (``PlacementService.rent_quote``:
  key lookup, quote read, one transaction with the placement, its key and its audit event).
* ``stop``: stopping it (one transaction: versioned update, audit event).
Targets from the issues: compute <= 1 ms, stored round trip, rent and stop <= 10 ms (p95) on SQLite.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dev.bench._report import add_out_argument, emit

REQUESTS = (
    "h100 x8 2 weeks",
    "a100 x4 45 days spot",
    "h100 x8 1 month 2 weeks committed",
    "mi300x x8 365 days committed",
    "l4 x1 90 minutes",
    "h200 x4 27 days committed",
    "rtx 4090 x2 10 дней спот",
    "a100 40gb x2 2 недели по требованию",
)


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("quote", help="quote computation and SQLite stored round-trip latency")
    parser.add_argument("--rounds", type=int, default=200, help="passes over the request mix (default 200)")
    parser.add_argument("--stored", type=int, default=300, help="stored quotes to time (default 300)")
    add_out_argument(parser)
    parser.set_defaults(handler=run)


def _summary(samples_s: list[float]) -> dict[str, Any]:
    ms = sorted(s * 1000 for s in samples_s)
    p95 = ms[min(len(ms) - 1, int(len(ms) * 0.95))]
    return {"n": len(ms), "median_ms": round(statistics.median(ms), 4), "p95_ms": round(p95, 4),
            "max_ms": round(ms[-1], 4)}


def _time(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


async def _stored(count: int) -> dict[str, Any]:
    # imported here, not at the top: `anchorgpu --help` and the other subcommands start without them
    from gpu.data import GpuData
    from gpu.placements.service import PlacementService
    from gpu.quote.service import QuoteService
    from infra.db import create_engine, dispose_engine
    from infra.settings import get_settings

    with tempfile.TemporaryDirectory(prefix="bench-quote-") as tmp:
        engine = create_engine(f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}")
        data = GpuData(get_settings().data.data_dir)
        service = QuoteService(engine, data)
        placements = PlacementService(engine, data, service)
        await service.start()
        await placements.setup()
        parsed = [service.parse(text).request for text in REQUESTS]
        new: list[float] = []
        replay: list[float] = []
        read: list[float] = []
        rent: list[float] = []
        stop: list[float] = []
        for i in range(count):
            request = parsed[i % len(parsed)]
            key = f"bench-{uuid.uuid4().hex}"
            start = time.perf_counter()
            issued = await service.issue(request, owner="bench", key=key, request_text=REQUESTS[i % len(parsed)])
            new.append(time.perf_counter() - start)
            start = time.perf_counter()
            again = await service.issue(request, owner="bench", key=key, request_text="again")
            replay.append(time.perf_counter() - start)
            start = time.perf_counter()
            got = await service.get(issued.quote_id)
            read.append(time.perf_counter() - start)
            assert again.replayed and again.quote_id == issued.quote_id and got is not None
            start = time.perf_counter()
            rented = await placements.rent_quote(issued.quote_id, owner="bench", key=f"rent-{key}")
            rent.append(time.perf_counter() - start)
            start = time.perf_counter()
            stopped = await placements.stop(rented.placement.id, owner="bench")
            stop.append(time.perf_counter() - start)
            assert not rented.replayed and stopped.changed
        stored = await service.store.count("bench")
        placed = await placements.store.count("bench")
        await dispose_engine(engine)
    return {"store_new": _summary(new), "store_replay": _summary(replay), "read_back": _summary(read),
            "stored_quotes": stored, "rent": _summary(rent), "stop": _summary(stop), "placements": placed}


def run(args: argparse.Namespace) -> int:
    from gpu.data import GpuData
    from gpu.quote.engine import compute_quote
    from gpu.quote.request import parse_quote_text
    from gpu.quote.service import utc_now
    from infra.settings import get_settings

    data = GpuData(get_settings().data.data_dir)
    catalog, prices = data.gpus, data.prices.current()
    requests = [parse_quote_text(text, catalog).request for text in REQUESTS]
    names = {r.gpu_id: catalog.get(r.gpu_id).name for r in requests}
    now = utc_now()
    for request in requests:  # warm-up: caches of the term search, Decimal contexts
        compute_quote(request, names[request.gpu_id], prices, now)
    rounds = max(1, int(args.rounds))
    compute = [_time(lambda r=r: compute_quote(r, names[r.gpu_id], prices, now))  # type: ignore[misc]
               for _ in range(rounds) for r in requests]
    parse_compute = [_time(lambda text=text: compute_quote(  # type: ignore[misc]
        (req := parse_quote_text(text, catalog).request), catalog.get(req.gpu_id).name, prices, now))
        for _ in range(max(1, rounds // 4)) for text in REQUESTS]
    stored = asyncio.run(_stored(max(1, int(args.stored))))
    result = {
        "benchmark": "quote",
        "requests": list(REQUESTS),
        "compute": _summary(compute),
        "parse_and_compute": _summary(parse_compute),
        **stored,
        "targets": {"compute_ms": 1.0, "stored_round_trip_ms": 10.0, "rent_p95_ms": 10.0, "stop_p95_ms": 10.0},
    }
    result["checks"] = {
        "compute_p95_within_1ms": result["compute"]["p95_ms"] <= 1.0,
        "store_new_median_within_10ms": result["store_new"]["median_ms"] <= 10.0,
        "store_new_p95_within_10ms": result["store_new"]["p95_ms"] <= 10.0,
        "rent_p95_within_10ms": result["rent"]["p95_ms"] <= 10.0,
        "stop_p95_within_10ms": result["stop"]["p95_ms"] <= 10.0,
    }
    # the figures are wall-clock: a busy machine (load above its core count) inflates the tails
    result["load_average_1m"] = round(os.getloadavg()[0], 2)
    result["cpu_count"] = os.cpu_count()
    emit("quote", result, args.out)
    return 0
