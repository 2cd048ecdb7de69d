"""``anchorgpu bench load``: N simulated chats × M messages against one and against two bot replicas.

The production topology on one machine (see ``dev.bench._cluster``): webhook replicas sharing a
scratch PostgreSQL database, a scratch Redis database, a Chroma server and ``llama_cpp.server``; this
process plays Telegram (at most ``--connections`` deliveries in flight, like Telegram's
``max_connections``) and the load balancer (round-robin). Both phases run in one invocation against the
same two started replicas: phase 1 routes everything to replica 0, phase 2 to both.

Printed JSON: per phase updates/s, latency p50/p95/p99 per command type, queue wait (waiting for a
connection slot), errors, lost and duplicated replies, stored quotes checked against PostgreSQL, RSS per
replica; the two/one throughput ratio; optionally (``--rss-probe``) the RSS of one replica running the
default model in process.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import platform
import random
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import aiohttp

from dev.bench._cluster import (
    DEFAULT_MODEL,
    SMALL_MODEL,
    Replica,
    private_message,
    rss_mb,
    scratch_postgres,
    scratch_redis,
    start_chroma,
    start_llama_server,
    start_replicas,
)
from dev.bench._report import add_out_argument, emit
from dev.telegram_stub import TelegramStub
from infra.stats import percentile

NON_LLM = {
    "quote": ("/quote h100 x8 2 weeks", "/quote a100-80gb x2 3 days", "/quote l40s x4 1 month",
              "/quote mi300x x1 36 hours spot"),
    "fit": ("/fit llama-3.1-8b q4_k_m 1xL40S", "/fit qwen2.5-7b rtx-4090", "/fit llama-3.1-70b 2xH100 ctx=32k"),
    "gpus": ("/gpus",),
    "help": ("/help", "/start"),
}
QUESTIONS = ("What is HBM memory?", "What is NVLink?", "What is tensor parallelism?", "What is a KV cache?")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("load", help="N chats x M messages against one and two webhook replicas (JSON)")
    parser.add_argument("--chats", type=int, default=50, help="simulated chats (default 50)")
    parser.add_argument("--messages", type=int, default=6, help="messages per chat and phase (default 6)")
    parser.add_argument("--connections", type=int, default=40,
                        help="deliveries in flight at once, like Telegram's max_connections (default 40)")
    parser.add_argument("--llm-share", type=float, default=0.0,
                        help="share of messages that are questions for the LLM (default 0: non-LLM load)")
    parser.add_argument("--redeliver", type=float, default=0.1,
                        help="share of updates delivered a second time to another replica (default 0.1)")
    parser.add_argument("--db-url", default="postgresql://postgres@127.0.0.1:5432/test",
                        help="PostgreSQL server; a scratch database is created and dropped")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14",
                        help="Redis database number to use; it is FLUSHDB'd before and after")
    parser.add_argument("--rss-probe", action="store_true",
                        help="also measure one replica with the default model in process (slow)")
    parser.add_argument("--seed", type=int, default=7)
    add_out_argument(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    emit("load", asyncio.run(bench(args)), args.out)
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pct(values: list[float], pct: float) -> float | None:
    """Milliseconds, or None when nothing was measured."""
    return round(percentile(values, pct) * 1000, 1) if values else None


class Phase:
    def __init__(self, name: str, replicas: list[Replica], chats: list[int], messages: int, llm_share: float,
                 redeliver: float, rng: random.Random, update_ids: itertools.count[int]) -> None:
        self.name = name
        self.replicas = replicas
        self.chats = chats
        self.plan: dict[int, list[tuple[str, dict[str, Any]]]] = {}
        for chat_id in chats:
            steps = []
            for n in range(messages):
                if rng.random() < llm_share:
                    kind, text = "question", rng.choice(QUESTIONS)
                else:
                    kind = rng.choice(list(NON_LLM))
                    text = rng.choice(NON_LLM[kind])
                steps.append((kind, private_message(next(update_ids), text, chat_id=chat_id, message_id=n + 1)))
            self.plan[chat_id] = steps
        self.redeliver = {u["update_id"] for steps in self.plan.values() for _, u in steps
                          if rng.random() < redeliver}
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.queue_wait: list[float] = []
        self.errors = 0
        self.rss_peak = [0.0] * len(replicas)
        self.cpu_seconds = [0.0] * len(replicas)
        self._rr = itertools.count()

    def _next_replica(self) -> int:
        return next(self._rr) % len(self.replicas)

    async def _deliver(self, session: aiohttp.ClientSession, slots: asyncio.Semaphore, update: dict[str, Any],
                       kind: str) -> None:
        queued = time.perf_counter()
        async with slots:
            started = time.perf_counter()
            self.queue_wait.append(started - queued)
            first = self._next_replica()
            deliveries = [self.replicas[first].deliver(session, update)]
            if update["update_id"] in self.redeliver and len(self.replicas) > 1:
                deliveries.append(self.replicas[(first + 1) % len(self.replicas)].deliver(session, update))
            statuses = await asyncio.gather(*deliveries)
            self.latency[kind].append(time.perf_counter() - started)
            if statuses[0] >= 300:  # Telegram would retry; the bench counts it and retries once
                self.errors += 1
                await self.replicas[(first + 1) % len(self.replicas)].deliver(session, update)

    async def _chat(self, session: aiohttp.ClientSession, slots: asyncio.Semaphore, chat_id: int) -> None:
        for kind, update in self.plan[chat_id]:  # a user waits for the answer before writing again
            await self._deliver(session, slots, update, kind)

    async def _sample_rss(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            for index, replica in enumerate(self.replicas):
                self.rss_peak[index] = max(self.rss_peak[index], replica.rss_mb())
            await asyncio.sleep(0.5)

    async def run(self, connections: int) -> float:
        slots = asyncio.Semaphore(connections)
        stop = asyncio.Event()
        sampler = asyncio.create_task(self._sample_rss(stop))
        cpu_before = [cpu_seconds(r.pid) for r in self.replicas]
        started = time.perf_counter()
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=connections * 2)) as session:
            await asyncio.gather(*(self._chat(session, slots, chat_id) for chat_id in self.chats))
        elapsed = time.perf_counter() - started
        self.cpu_seconds = [round(cpu_seconds(r.pid) - before, 2) for r, before in zip(self.replicas, cpu_before,
                                                                                       strict=True)]
        stop.set()
        await sampler
        return elapsed

    def report(self, elapsed: float, stub: Any, quotes_in_db: int) -> dict[str, Any]:
        expected = {chat_id: len(steps) for chat_id, steps in self.plan.items()}
        replies: dict[int, int] = defaultdict(int)
        for call in stub.calls:
            # a /fit answer is one photo message (the chart captioned with the breakdown)
            if call.method in ("sendMessage", "sendPhoto") and call.params.get("chat_id") in expected:
                replies[int(call.params["chat_id"])] += 1
        lost = sum(max(0, n - replies[c]) for c, n in expected.items())
        duplicated = sum(max(0, replies[c] - n) for c, n in expected.items())
        total = sum(expected.values())
        non_llm = sum(len(v) for k, v in self.latency.items() if k != "question")
        quote_updates = sum(1 for steps in self.plan.values() for kind, update in steps
                            if kind == "quote" and " spot" not in update["message"]["text"])
        return {
            "replicas": len(self.replicas),
            "updates": total,
            "redelivered_updates": len(self.redeliver) if len(self.replicas) > 1 else 0,
            "seconds": round(elapsed, 2),
            "updates_per_s": round(total / elapsed, 1),
            "non_llm_updates_per_s": round(non_llm / elapsed, 1),
            "latency_ms": {kind: {"n": len(v), "p50": _pct(v, 50), "p95": _pct(v, 95), "p99": _pct(v, 99)}
                           for kind, v in sorted(self.latency.items())},
            "queue_wait_ms": {"p50": _pct(self.queue_wait, 50), "p95": _pct(self.queue_wait, 95),
                              "p99": _pct(self.queue_wait, 99)},
            "errors": self.errors,
            "lost": lost,
            "duplicated": duplicated,
            "quotes_expected": quote_updates,  # spot requests for GPUs without spot get an explanation
            "quotes_stored": quotes_in_db,
            "rss_mb_peak": self.rss_peak,
            # CPU the replicas burned on this phase: capacity per dedicated core = 1000 / cpu_ms_per_update
            "replica_cpu_seconds": self.cpu_seconds,
            "cpu_ms_per_update": round(sum(self.cpu_seconds) * 1000 / total, 1) if total else None,
        }


async def _quotes_stored(db_url: str, chats: list[int]) -> int:
    import asyncpg

    conn = await asyncpg.connect(db_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        owners = [f"tg:{c}" for c in chats]
        return int(await conn.fetchval("SELECT count(*) FROM quotes WHERE owner = ANY($1::text[])", owners))
    finally:
        await conn.close()


async def _rss_probe(stub: Any, work: Path, db_url: str, redis_url: str, chroma_url: str) -> dict[str, Any]:
    """One replica as shipped by default: the default GGUF in process plus the embedder; one answered question."""
    replicas = await start_replicas(1, stub_url=stub.base_url, workdir=work / "probe", db_url=db_url,
                                    redis_url=redis_url, chroma_url=chroma_url, llm_base_url=None,
                                    LLM_MODEL_PATH=str(DEFAULT_MODEL), LLM_MAX_TOKENS="64")
    replica = replicas[0]
    try:
        async with aiohttp.ClientSession() as session:
            started = time.perf_counter()
            status = await replica.deliver(session, private_message(9_000_000, "What is HBM memory?",
                                                                    chat_id=9_000_000, message_id=1), timeout=600)
            seconds = time.perf_counter() - started
        return {"model": DEFAULT_MODEL.name, "rss_mb_after_answer": rss_mb(replica.pid), "status": status,
                "answer_seconds": round(seconds, 1)}
    finally:
        await replica.stop()


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    stub = TelegramStub()
    await stub.start()
    rng = random.Random(args.seed)
    update_ids = itertools.count(1)
    result: dict[str, Any] = {"chats": args.chats, "messages_per_chat": args.messages,
                              "connections": args.connections, "llm_share": args.llm_share,
                              "cpu_count": os.cpu_count(), "load_average_at_start": list(os.getloadavg()),
                              "python": platform.python_version()}
    replicas: list[Replica] = []
    servers = []
    with tempfile.TemporaryDirectory(prefix="anchorgpu-load-") as tmp:
        work = Path(tmp)
        try:
            async with scratch_postgres(args.db_url, tag="load") as db_url, scratch_redis(args.redis_url) as redis:
                (chroma, chroma_url), (llm, llm_url) = await asyncio.gather(
                    start_chroma(work / "chroma", work), start_llama_server(SMALL_MODEL, work))
                servers = [chroma, llm]
                boot = time.perf_counter()
                replicas = await start_replicas(
                    2, stub_url=stub.base_url, workdir=work, db_url=db_url, redis_url=redis, chroma_url=chroma_url,
                    llm_base_url=llm_url, LLM_MAX_TOKENS="48", TELEGRAM_RATE_LIMIT_PER_MINUTE="1000000",
                    TELEGRAM_CHAT_RATE_LIMIT_PER_MINUTE="1000000")
                result["replicas_started_s"] = round(time.perf_counter() - boot, 1)
                result["rss_mb_idle"] = [r.rss_mb() for r in replicas]
                phases = {}
                for name, used, base in (("one_replica", replicas[:1], 1_000_000),
                                         ("two_replicas", replicas, 2_000_000)):
                    chats = list(range(base, base + args.chats))
                    phase = Phase(name, used, chats, args.messages, args.llm_share, args.redeliver, rng,
                                  update_ids)
                    elapsed = await phase.run(args.connections)
                    await asyncio.sleep(1.0)  # late replies (none expected: webhooks answer after processing)
                    phases[name] = phase.report(elapsed, stub, await _quotes_stored(db_url, chats))
                result.update(phases)
                one = phases["one_replica"]["non_llm_updates_per_s"]
                two = phases["two_replicas"]["non_llm_updates_per_s"]
                result["two_vs_one_non_llm_throughput"] = round(two / one, 2) if one else None
                result["load_average_at_end"] = list(os.getloadavg())
                for replica in replicas:
                    await replica.stop()
                if args.rss_probe:
                    result["rss_probe_default_model"] = await _rss_probe(stub, work, db_url, redis, chroma_url)
        finally:
            for process in [*replicas, *servers]:
                await process.stop()
            await stub.stop()
    result["lost_total"] = sum(result[p]["lost"] for p in ("one_replica", "two_replicas") if p in result)
    result["duplicated_total"] = sum(result[p]["duplicated"] for p in ("one_replica", "two_replicas")
                                     if p in result)
    if "one_replica" in result:
        result["median_latency_ms_all"] = round(statistics.median(
            [v["p50"] for p in ("one_replica", "two_replicas") for v in result[p]["latency_ms"].values()
             if v["p50"] is not None]), 1)
    return result
