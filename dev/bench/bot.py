"""``anchorgpu bench bot``: the Telegram front measured through the local Bot API stub.

1. Non-LLM commands (/fit, /quote, inline queries) against our bot and against a bare aiogram echo bot,
   both running at once on the same machine, in one run: updates/s with ``--concurrency`` chats in flight
   (``--rounds`` passes each, alternating between the bots), and latency (update pushed -> first reply
   recorded by the stub) one update at a time. Target: ratio >= 0.9, p95 <= 50 ms.
2. ``--llm-chats`` chats (half private, half groups) asking at once on the small model, with the stub's
   flood control on: every chat gets exactly one final answer, and no 429 comes from our preview rate.

Both bots are real processes polling the stub (bench-only rate limits are raised so that the limiter
still runs but does not refuse the synthetic load).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dev.bench._report import add_out_argument, emit
from dev.telegram_stub import TelegramStub
from infra.settings import REPO_ROOT
from infra.stats import percentile

TOKEN = "123456789:BENCH-token-for-the-local-stub-only"
SMALL_MODEL = REPO_ROOT / "var" / "models" / "smollm2-135m-instruct-q4_1.gguf"
FIT_QUERIES = ("llama-3.1-8b q4_k_m 1xL40S", "qwen2.5-7b on rtx-4090", "mistral-7b fp16 1xa100-80gb ctx=8k")
QUOTE_QUERIES = ("h100 x8 2 weeks", "a100-80gb x2 3 days", "l40s x4 1 month")
INLINE_QUERIES = ("kv cache", "tensor parallelism", "nvlink", "quantization")


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("bot", help="Telegram front through the Bot API stub vs a bare echo bot")
    parser.add_argument("--updates", type=int, default=150, help="updates per throughput pass")
    parser.add_argument("--latency-updates", type=int, default=60, help="updates for the latency pass")
    parser.add_argument("--concurrency", type=int, default=8, help="chats in flight in the throughput pass")
    parser.add_argument("--rounds", type=int, default=4,
                        help="throughput passes per bot, alternating between the two (the ratio is their median)")
    parser.add_argument("--llm-chats", type=int, default=20, help="chats asking the LLM at once (0 = skip)")
    parser.add_argument("--llm-max-tokens", type=int, default=24)
    parser.add_argument("--redis-url", default=None,
                        help="run our bot with DB_REDIS_URL (Redis de-duplication) instead of SQLite")
    parser.add_argument("--kinds", default="fit,quote,inline", help="non-LLM update kinds to cycle through")
    add_out_argument(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    emit("bot", asyncio.run(bench(args)), args.out)
    return 0


class Replies:
    """Resolves a future when the stub records the first reply for a chat or an inline query."""

    def __init__(self, stub: Any) -> None:
        self.waiting: dict[Any, asyncio.Future[float]] = {}
        stub.listeners.append(self.on_call)

    def on_call(self, call: Any) -> None:
        if call.method in ("sendMessage", "sendPhoto", "sendMessageDraft", "sendRichMessage"):
            key: Any = call.params.get("chat_id")
        elif call.method == "answerInlineQuery":
            key = call.params.get("inline_query_id")
        else:
            return
        future = self.waiting.pop(key, None)
        if future is not None and not future.done():
            future.set_result(call.ts)

    def expect(self, key: Any) -> asyncio.Future[float]:
        future: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.waiting[key] = future
        return future


def _env(stub: Any, state: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "LLM_", "DB_"))}
    env.update({"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_API_BASE": stub.base_url, "TELEGRAM_HEALTH_PORT": "0",
                "ANCHORGPU_STATE_DIR": str(state), "DB_URL": f"sqlite+aiosqlite:///{state / 'bench.db'}",
                "LLM_MODEL_PATH": str(SMALL_MODEL), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                "ANCHORGPU_LOG_LEVEL": "WARNING",
                "TELEGRAM_RATE_LIMIT_PER_MINUTE": "1000000", "TELEGRAM_CHAT_RATE_LIMIT_PER_MINUTE": "1000000"})
    env.update(extra)
    return env


def _spawn(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=REPO_ROOT)


async def _start(argv: list[str], env: dict[str, str], stub: Any, log: Path) -> subprocess.Popen[bytes]:
    proc = _spawn(argv, env, log)
    replies = Replies(stub)
    ready = replies.expect(1)
    stub.message_update("/start", chat_id=1, user_id=1)
    try:
        await asyncio.wait_for(ready, 600)
    except TimeoutError:
        proc.kill()
        raise RuntimeError(f"bot did not start; see {log}") from None
    stub.listeners.remove(replies.on_call)
    return proc


async def _wait_idle(pid: int, timeout_s: float = 180.0) -> None:
    """Until the started bot stops burning CPU on its own: start-up work still running in the background
    (the model's prompt warm-up, a first index sync) would otherwise be billed to the measured updates."""
    deadline = time.monotonic() + timeout_s
    quiet = 0
    previous = _cpu_seconds(pid)
    while previous is not None and quiet < 3 and time.monotonic() < deadline:
        await asyncio.sleep(0.5)
        current = _cpu_seconds(pid)
        if current is None:
            return
        quiet = quiet + 1 if current - previous < 0.05 else 0  # under 10 % of a core for 1.5 s
        previous = current


async def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    for _ in range(200):
        if proc.poll() is not None:
            return
        await asyncio.sleep(0.1)
    proc.kill()


async def _one(stub: Any, replies: Replies, index: int, chat_id: int,
               kinds: tuple[str, ...]) -> tuple[str, float]:
    kind = kinds[index % len(kinds)]
    key: Any = chat_id if kind != "inline" else None
    if kind == "inline":
        # the key must be registered before the push: derive the id first
        query_id = f"bench-{index}-{time.monotonic_ns()}"
        future = replies.expect(query_id)
        started = time.monotonic()
        stub.push_update({"inline_query": {
            "id": query_id, "query": INLINE_QUERIES[index % len(INLINE_QUERIES)], "offset": "",
            "from": {"id": chat_id, "is_bot": False, "first_name": "B", "language_code": "en"}}})
    else:
        future = replies.expect(key)
        started = time.monotonic()
        stub.message_update(_command(kind, index), chat_id=chat_id, user_id=chat_id, language_code="en")
    replied_at = await asyncio.wait_for(future, 60)
    return kind, replied_at - started


def _command(kind: str, index: int) -> str:
    if kind == "fit":
        return f"/fit {FIT_QUERIES[index % len(FIT_QUERIES)]}"
    if kind == "quote":
        return f"/quote {QUOTE_QUERIES[index % len(QUOTE_QUERIES)]}"
    return f"/{kind}"  # e.g. "help": the front's own overhead with a trivial handler


async def _settle(seconds: float) -> None:
    """Let trailing work (e.g. /fit chart images) finish before the next pass."""
    await asyncio.sleep(seconds)


def _cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU time of a process so far (Linux /proc), None where unavailable."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def latency(stub: Any, updates: int, chats: Iterator[int], kinds: tuple[str, ...]) -> dict[str, Any]:
    """A warm-up (first calls load catalogs, fonts, caches), then one update at a time: service latency."""
    replies = Replies(stub)
    for index in range(6):
        await _one(stub, replies, index, next(chats), kinds)
    await _settle(1.0)
    latencies: dict[str, list[float]] = defaultdict(list)
    for index in range(updates):
        kind, seconds = await _one(stub, replies, index, next(chats), kinds)
        latencies[kind].append(seconds)
        await asyncio.sleep(0.02)  # one at a time: service latency, not queueing
    await _settle(1.0)
    stub.listeners.remove(replies.on_call)
    every = sorted(itertools.chain.from_iterable(latencies.values()))
    return {"latency_ms": {"p50": _ms(statistics.median(every)), "p95": _ms(percentile(every, 95)),
                           "p99": _ms(percentile(every, 99))},
            "p95_ms_by_kind": {kind: _ms(percentile(values, 95)) for kind, values in sorted(latencies.items())}}


async def throughput(stub: Any, updates: int, concurrency: int, chats: Iterator[int], kinds: tuple[str, ...],
                     pid: int | None = None) -> tuple[float, float | None]:
    """(updates/s with ``concurrency`` chats in flight, the bot process's CPU ms per update over the pass)."""
    replies = Replies(stub)
    counter = itertools.count()

    async def worker() -> None:
        while (index := next(counter)) < updates:
            await _one(stub, replies, index, next(chats), kinds)

    cpu_before = _cpu_seconds(pid)
    started = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.monotonic() - started
    cpu_after = _cpu_seconds(pid)
    stub.listeners.remove(replies.on_call)
    await _settle(0.5)
    cpu_ms = None if cpu_before is None or cpu_after is None else 1000 * (cpu_after - cpu_before) / updates
    return updates / elapsed, cpu_ms


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


async def concurrent_questions(stub: Any, chats: int) -> dict[str, Any]:
    """``chats`` chats ask at once (half private, half groups via /ask); flood control on in the stub."""
    stub.enable_flood_control()
    private = [5000 + i for i in range(chats - chats // 2)]
    groups = [-5000 - i for i in range(chats // 2)]
    started = time.monotonic()
    for chat in private:
        stub.message_update("What is a KV cache?", chat_id=chat, user_id=chat, language_code="en")
    for chat in groups:
        stub.message_update("/ask What is tensor parallelism?", chat_id=chat, user_id=-chat,
                            chat_type="supergroup", language_code="en")

    def finals(chat: int) -> int:
        # a final answer is the HTML message (previews are plain text without parse_mode)
        return sum(1 for c in stub.calls if c.params.get("chat_id") == chat
                   and c.method in ("sendMessage", "editMessageText") and c.params.get("parse_mode") == "HTML")

    deadline = time.monotonic() + 900
    # polling the recorded calls keeps this independent of how many calls each chat gets
    while time.monotonic() < deadline and any(finals(chat) == 0 for chat in private + groups):  # noqa: ASYNC110
        await asyncio.sleep(0.5)
    elapsed = time.monotonic() - started
    await asyncio.sleep(2.0)  # anything duplicated would arrive now
    counts = {chat: finals(chat) for chat in private + groups}
    previews_per_group = [len([c for c in stub.calls_to("editMessageText", chat)]) for chat in groups]
    return {
        "chats": chats,
        "answered": sum(1 for n in counts.values() if n >= 1),
        "lost": sum(1 for n in counts.values() if n == 0),
        "duplicated": sum(1 for n in counts.values() if n > 1),
        "flood_429s": sum(stub.flood_429s.values()),
        "drafts": len(stub.calls_to("sendMessageDraft")),
        "group_edits_max": max(previews_per_group, default=0),
        "seconds": round(elapsed, 1),
    }


@dataclass
class _Bot:
    stub: Any
    proc: subprocess.Popen[bytes]
    chats: Iterator[int]
    passes: list[tuple[float, float | None]] = field(default_factory=list)


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    """Both bots run side by side, each polling its own stub, and their throughput passes alternate
    (echo, ours, ours, echo, …): drift in the machine's speed hits both alike, and the ratio is the median
    of the per-round ratios."""
    result: dict[str, Any] = {}
    kinds = tuple(args.kinds.split(","))
    bots: dict[str, _Bot] = {}
    with tempfile.TemporaryDirectory(prefix="bench-bot-") as tmp:
        root = Path(tmp)
        runs = (("echo", [sys.executable, "-m", "dev.bench._echo_bot"]),
                ("ours", [sys.executable, "-m", "anchorgpu", "run"]))
        try:
            for name, argv in runs:
                stub = TelegramStub()
                stub.rich_messages = True  # a Bot API 10.3 server: /fit and /quote go out as rich tables
                await stub.start()
                state = root / name
                state.mkdir()
                (state / "models").symlink_to(REPO_ROOT / "var" / "models", target_is_directory=True)
                extra = {"LLM_MAX_TOKENS": str(args.llm_max_tokens)}
                if args.redis_url and name == "ours":
                    extra["DB_REDIS_URL"] = args.redis_url
                try:
                    proc = await _start(argv, _env(stub, state, **extra), stub, root / f"{name}.log")
                except BaseException:
                    await stub.stop()
                    raise
                bots[name] = _Bot(stub, proc, itertools.count(10_000))
            for bot in bots.values():
                await _wait_idle(bot.proc.pid)
            for name, bot in bots.items():
                result[name] = await latency(bot.stub, args.latency_updates, bot.chats, kinds)
            for round_number in range(args.rounds):
                order = ("echo", "ours") if round_number % 2 == 0 else ("ours", "echo")
                for name in order:
                    bot = bots[name]
                    bot.passes.append(await throughput(bot.stub, args.updates, args.concurrency, bot.chats,
                                                       kinds, pid=bot.proc.pid))
            for name, bot in bots.items():
                rates = [rate for rate, _ in bot.passes]
                cpu = [ms for _, ms in bot.passes if ms is not None]
                result[name] = {"updates_per_s": round(statistics.median(rates), 1),
                                "updates_per_s_by_round": [round(rate, 1) for rate in rates],
                                # the bot process's CPU (all threads) per update during the throughput passes
                                "cpu_ms_per_update": round(statistics.median(cpu), 2) if cpu else None,
                                **result[name], "rich_messages": len(bot.stub.calls_to("sendRichMessage"))}
            if args.llm_chats:
                result["llm_concurrent"] = await concurrent_questions(bots["ours"].stub, args.llm_chats)
        finally:
            for bot in bots.values():
                await _stop(bot.proc)
                await bot.stub.stop()
    ratios = [ours[0] / echo[0] for ours, echo in zip(bots["ours"].passes, bots["echo"].passes, strict=True)]
    result["ratio_updates_per_s"] = round(statistics.median(ratios), 3)
    result["ratio_by_round"] = [round(ratio, 3) for ratio in ratios]
    result["targets"] = {
        "ratio_ge_0_9": result["ratio_updates_per_s"] >= 0.9,
        "p95_le_50ms": result["ours"]["latency_ms"]["p95"] <= 50,
    }
    if "llm_concurrent" in result:
        llm = result["llm_concurrent"]
        result["targets"]["llm_no_lost_dup_429"] = not (llm["lost"] or llm["duplicated"] or llm["flood_429s"])
    return result
