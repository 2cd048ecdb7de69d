"""``anchorgpu bench soak --minutes N``: a long mixed load on one bot process, watched for leaks and losses.

The bot is a real ``anchorgpu run`` process in webhook mode (SQLite, the glossary index in its state folder,
the model in process); this process plays Telegram twice over: it POSTs every update to the webhook, like
Telegram, and serves the Bot API through the local stub (``dev/telegram_stub.py``), which now and then
answers a 429 or a 5xx.

The load, for ``--minutes``:

* ``--chats`` private chats, each a user who writes, waits for the answer, thinks (``--think-s``) and writes
  again: commands (``/fit``, ``/quote``, ``/gpus``, ``/help``, ``/terms``), inline queries, and button
  presses (the ``/terms`` browser's buttons on the message as the stub holds it now);
* one question at a time to the real model (two cores cannot answer more at once), from a few chats in
  turn, and a 👍 / 👎 press on some of the answers;
* ``--redeliver`` of the updates delivered a second time with the same ``update_id``: half while the first
  delivery is still being handled, half after it was answered (Telegram retrying a webhook it thinks
  failed). Inline queries are never redelivered: the bot answers a repeated one again on purpose (no side
  effects, see ``bot/delivery/dedupe.py``).

Every update expects exactly one reply: a message in its chat (``sendMessage`` / ``sendPhoto``), or the
answer to its inline query / button press, counted only when the stub accepted it (a call answered with an
injected fault is not a reply). ``lost``: no reply within ``--grace-s``; ``duplicated``: more than one.
``errors``: ERROR records and tracebacks in the bot's log, 5xx and failed deliveries from its webhook.

Every ``--sample-s`` the bot process's RSS (``/proc/<pid>/status``), open file descriptors
(``/proc/<pid>/fd``), threads, CPU and the window's p95 latency are sampled. Warm-up is the first
``--warmup-share`` of the run, and at least until every kind of update has been answered once (the first
question loads the model); ``rss_growth_pct`` compares the last sample with the first after warm-up.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import itertools
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import aiohttp
from aiohttp import web

from dev.bench._cluster import (
    DEFAULT_MODEL,
    SMALL_MODEL,
    Replica,
    free_port,
    private_message,
    replica_env,
)
from dev.bench._report import add_out_argument, emit
from dev.telegram_stub import Fault, TelegramStub
from infra.settings import REPO_ROOT
from infra.stats import percentile

COMMANDS = {
    "fit": ("/fit llama-3.1-8b q4_k_m 1xL40S", "/fit qwen2.5-7b rtx-4090", "/fit mistral-7b fp16 1xa100-80gb ctx=8k"),
    "quote": ("/quote h100 x8 2 weeks", "/quote a100-80gb x2 3 days", "/quote l40s x4 1 month"),
    "gpus": ("/gpus",),
    "help": ("/help", "/start"),
    "terms": ("/terms",),
}
INLINE_QUERIES = ("kv cache", "tensor parallelism", "nvlink", "quantization", "hbm")
QUESTIONS = (("en", "What is HBM memory?"), ("en", "What is NVLink?"), ("en", "What is tensor parallelism?"),
             ("en", "What is a KV cache?"), ("ru", "Что такое KV-кэш?"), ("ru", "Зачем нужен NVLink?"))
# a user's step: (kind, weight); a press needs a keyboard in the chat, else the user sends /terms first
STEPS = (("command", 0.6), ("inline", 0.2), ("callback", 0.2))
ASKER_CHATS = 6
MESSAGE_METHODS = frozenset({"sendMessage", "sendPhoto"})
REPLY_METHODS = MESSAGE_METHODS | {"answerInlineQuery", "answerCallbackQuery"}
FAULT_METHODS = ("sendMessage", "sendPhoto", "answerInlineQuery", "answerCallbackQuery")
MODELS = {"default": DEFAULT_MODEL, "small": SMALL_MODEL}


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("soak", help="long mixed load on one bot process: RSS, fds, p95, lost/duplicated")
    parser.add_argument("--minutes", type=float, default=10.0, help="length of the load (default 10)")
    parser.add_argument("--chats", type=int, default=12, help="users writing at once (default 12)")
    parser.add_argument("--think-s", type=float, nargs=2, default=(0.5, 2.5), metavar=("MIN", "MAX"),
                        help="a user's pause between answer and next update (default 0.5 2.5)")
    parser.add_argument("--redeliver", type=float, default=0.05,
                        help="share of updates delivered twice with the same update_id (default 0.05)")
    parser.add_argument("--fault-every-s", type=float, default=10.0,
                        help="the stub answers one Bot API call with a 429/500/502 this often (0 = never)")
    parser.add_argument("--sample-s", type=float, default=5.0, help="sampling period (default 5 s)")
    parser.add_argument("--grace-s", type=float, default=150.0,
                        help="an update without a reply after this long is lost (default 150 s)")
    parser.add_argument("--warmup-share", type=float, default=0.25,
                        help="share of the run counted as warm-up for rss_growth_pct (default 0.25)")
    parser.add_argument("--model", default="default",
                        help="'default' (qwen2.5-coder-0.5b), 'small' (SmolLM2-135M) or a GGUF path")
    parser.add_argument("--llm-max-tokens", type=int, default=48)
    parser.add_argument("--prompt-cache-mb", type=int, default=None,
                        help="run the bot with LLM_PROMPT_CACHE_MB (default: the setting's default)")
    parser.add_argument("--question-gap-s", type=float, default=2.0,
                        help="pause between one answered question and the next (default 2 s)")
    parser.add_argument("--index", type=Path, default=REPO_ROOT / "var" / "chroma",
                        help="a built glossary index (Chroma folder) the bot starts from, so that it embeds "
                             "nothing at start-up (default var/chroma when it exists)")
    parser.add_argument("--redis-url", default=None, help="run the bot with DB_REDIS_URL (claims, FSM in Redis)")
    parser.add_argument("--seed", type=int, default=17)
    add_out_argument(parser)
    parser.add_argument("--log", type=Path, default=None, help="keep a copy of the bot's log here")
    parser.add_argument("--log-level", default="WARNING", choices=("DEBUG", "INFO", "WARNING", "ERROR"),
                        help="the bot's log level (default WARNING; errors are counted at any level)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    model = MODELS.get(args.model, Path(args.model))
    if not model.is_file():
        print(f"anchorgpu bench soak: no model at {model} (run scripts/setup.sh, or pass --model PATH)",
              file=sys.stderr)
        return 2
    if args.minutes <= 0 or args.chats < 1 or not 0 <= args.redeliver <= 1:
        print("anchorgpu bench soak: --minutes must be > 0, --chats >= 1, --redeliver within 0..1", file=sys.stderr)
        return 2
    try:
        result = asyncio.run(soak(args, model))
    except (RuntimeError, TimeoutError) as exc:  # the bot did not start: its log tail says why
        print(f"anchorgpu bench soak: {exc}", file=sys.stderr)
        return 1
    emit("soak", result, args.out)
    return 0


# ---- what was sent, and what came back ---------------------------------------------------------------
@dataclass
class Tracked:
    update_id: int
    kind: str
    key: tuple[str, Any]
    sent_at: float
    text: str = ""
    reply: str = ""  # the first reply's text, for the questions' examples
    redelivery: str | None = None  # "concurrent" | "late"
    replies: int = 0
    first_reply_at: float | None = None
    statuses: list[int] = field(default_factory=list)
    answered: asyncio.Future[None] | None = None

    @property
    def latency(self) -> float | None:
        return None if self.first_reply_at is None else self.first_reply_at - self.sent_at


class Ledger:
    """Attributes every accepted reply to the update it answers.

    A chat has one update in flight (its user waits for the answer), so a message in a chat belongs to the
    chat's latest update; a late duplicate of an earlier one still makes some update count two replies.
    """

    def __init__(self) -> None:
        self.updates: list[Tracked] = []
        self._by_key: dict[tuple[str, Any], Tracked] = {}
        self.keyboards: dict[tuple[int, str], int] = {}  # (chat, callback prefix) -> latest message with it
        self.answered: list[Tracked] = []  # in the order of their first replies
        self.unattributed: list[str] = []  # replies to nothing the bench sent

    def open(self, tracked: Tracked) -> None:
        tracked.answered = asyncio.get_running_loop().create_future()
        self.updates.append(tracked)
        self._by_key[tracked.key] = tracked

    def on_reply(self, method: str, params: dict[str, Any], result: Any) -> None:
        if method in MESSAGE_METHODS:
            # the sent message as the stub stored it (an upload's form fields cannot be parsed twice)
            chat_id = int(result["chat"]["id"])
            key: tuple[str, Any] = ("chat", chat_id)
            markup = result.get("reply_markup")
            if isinstance(markup, dict):
                for row in markup.get("inline_keyboard", []):
                    for button in row:
                        prefix = str(button.get("callback_data", "")).split(":", 1)[0]
                        if prefix:
                            self.keyboards[(chat_id, prefix)] = int(result["message_id"])
        elif method == "answerInlineQuery":
            key = ("inline", str(params.get("inline_query_id")))
        else:
            key = ("callback", str(params.get("callback_query_id")))
        tracked = self._by_key.get(key)
        if tracked is None:
            self.unattributed.append(f"{method} {key[1]}")
            return
        tracked.replies += 1
        if tracked.first_reply_at is None:
            tracked.first_reply_at = time.monotonic()
            if isinstance(result, dict):
                tracked.reply = str(result.get("text") or result.get("caption") or "")[:200]
            self.answered.append(tracked)
            if tracked.answered is not None and not tracked.answered.done():
                tracked.answered.set_result(None)


def soak_stub(ledger: Ledger) -> Any:
    """The test stub, reporting each reply it accepted (a faulted call is recorded by the stub too)."""

    class SoakStub(TelegramStub):
        async def _handle(self, request: Any) -> Any:
            response = await super()._handle(request)
            method = request.match_info["method"]
            if method in REPLY_METHODS and response.status == 200 and isinstance(response, web.Response):
                # answers to queries and presses are JSON (never uploads): aiohttp keeps the body to parse again
                params = {} if method in MESSAGE_METHODS else (await self._read_params(request))[0]
                ledger.on_reply(method, params, json.loads(cast(bytes, response.body)).get("result"))
            # the bench reads replies from the ledger: the stub's own record would grow for hours
            self.calls.clear()
            return response

    return SoakStub()


# ---- the bot process ---------------------------------------------------------------------------------
def proc_sample(pid: int) -> dict[str, float]:
    """RSS (total, anonymous), threads, open fds and CPU seconds of a process, from /proc."""
    values: dict[str, float] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            name, _, rest = line.partition(":")
            if name in ("VmRSS", "RssAnon"):
                values[name] = int(rest.split()[0]) / 1024
            elif name == "Threads":
                values["threads"] = int(rest)
    with contextlib.suppress(OSError):
        values["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    with contextlib.suppress(OSError, IndexError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        values["cpu_s"] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return values


def log_errors(log: str) -> dict[str, Any]:
    """ERROR/CRITICAL records and tracebacks in the bot's log (JSON lines; anything else is raw stderr)."""
    errors: list[str] = []
    warnings: Counter[str] = Counter()
    tracebacks = 0
    for line in log.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            if line.startswith("Traceback"):
                tracebacks += 1
                errors.append(line)
            continue
        level = record.get("level")
        if level in ("ERROR", "CRITICAL"):
            errors.append(f"{record.get('logger')}: {record.get('msg')}")
            if "exc" in record:
                tracebacks += 1
        elif level == "WARNING":
            warnings[f"{record.get('logger')}: {str(record.get('msg'))[:60]}"] += 1
    return {"errors": errors, "tracebacks": tracebacks, "warnings": dict(warnings.most_common(10))}


# ---- the load ----------------------------------------------------------------------------------------
class Soak:
    def __init__(self, args: argparse.Namespace, stub: Any, ledger: Ledger, replica: Replica,
                 session: aiohttp.ClientSession) -> None:
        self.args = args
        self.stub = stub
        self.ledger = ledger
        self.replica = replica
        self.session = session
        self.rng = random.Random(args.seed)
        self.update_ids = itertools.count(1)
        self.message_ids: dict[int, itertools.count[int]] = defaultdict(lambda: itertools.count(1))
        self.started = 0.0
        self.stop_at = 0.0
        self.samples: list[dict[str, Any]] = []
        self.faults: Counter[str] = Counter()
        self.first_answer_at: dict[str, float] = {}

    def now(self) -> float:
        return time.monotonic() - self.started

    async def send(self, kind: str, update: dict[str, Any], key: tuple[str, Any]) -> Tracked:
        update["update_id"] = next(self.update_ids)
        what = update.get("message", {}).get("text") or update.get("callback_query", {}).get("data") or ""
        tracked = Tracked(update["update_id"], kind, key, time.monotonic(), text=str(what)[:60])
        if kind != "inline" and self.rng.random() < self.args.redeliver:
            tracked.redelivery = self.rng.choice(("concurrent", "late"))
        self.ledger.open(tracked)
        timeout = self.args.grace_s
        if tracked.redelivery == "concurrent":
            tracked.statuses += await asyncio.gather(self.replica.deliver(self.session, update, timeout),
                                                     self.replica.deliver(self.session, update, timeout))
        else:
            tracked.statuses.append(await self.replica.deliver(self.session, update, timeout))
        assert tracked.answered is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(tracked.answered),
                                   max(0.0, tracked.sent_at + self.args.grace_s - time.monotonic()))
        if tracked.first_reply_at is not None:
            self.first_answer_at.setdefault(kind, self.now())
            if tracked.redelivery == "late":  # the reply is out: Telegram retries anyway (it saw a timeout)
                tracked.statuses.append(await self.replica.deliver(self.session, update, timeout))
        return tracked

    def message(self, chat_id: int, text: str, lang: str = "en") -> dict[str, Any]:
        return private_message(0, text, chat_id=chat_id, message_id=next(self.message_ids[chat_id]),
                               language_code=lang)

    def press(self, chat_id: int, prefix: str, choose: Any) -> dict[str, Any] | None:
        """A press on a button of the chat's latest message with ``prefix`` buttons, as the message is now."""
        message_id = self.ledger.keyboards.get((chat_id, prefix))
        message = self.stub.message(chat_id, message_id) if message_id is not None else None
        if message is None:
            return None
        buttons = [b["callback_data"] for row in (message.get("reply_markup") or {}).get("inline_keyboard", [])
                   for b in row if str(b.get("callback_data", "")).startswith(f"{prefix}:")]
        if not buttons:
            return None
        sent = copy.deepcopy(message)
        sent["chat"] = {"id": chat_id, "type": "private", "first_name": "Soak"}
        return {"callback_query": {
            "id": f"soak-cb-{next(self.update_ids)}", "chat_instance": f"ci{chat_id}", "data": choose(buttons),
            "from": {"id": chat_id, "is_bot": False, "first_name": "Soak", "language_code": "en"},
            "message": sent}}

    async def user(self, chat_id: int) -> None:
        await self.send("terms", self.message(chat_id, "/terms"), ("chat", chat_id))
        while time.monotonic() < self.stop_at:
            await asyncio.sleep(self.rng.uniform(*self.args.think_s))
            step = self.rng.choices([s for s, _ in STEPS], [w for _, w in STEPS])[0]
            if step == "callback":
                update = self.press(chat_id, "terms", self.rng.choice)
                if update is not None:
                    await self.send("callback", update, ("callback", update["callback_query"]["id"]))
                    continue
                step = "command"
            if step == "inline":
                query_id = f"soak-iq-{next(self.update_ids)}"
                await self.send("inline", {"inline_query": {
                    "id": query_id, "query": self.rng.choice(INLINE_QUERIES), "offset": "",
                    "from": {"id": chat_id, "is_bot": False, "first_name": "Soak", "language_code": "en"}}},
                    ("inline", query_id))
                continue
            kind = self.rng.choice(list(COMMANDS))
            await self.send(kind, self.message(chat_id, self.rng.choice(COMMANDS[kind])), ("chat", chat_id))

    async def asker(self) -> None:
        for n in itertools.count():
            if time.monotonic() >= self.stop_at:
                return
            chat_id = 900_000 + n % ASKER_CHATS
            lang, question = self.rng.choice(QUESTIONS)
            tracked = await self.send("question", self.message(chat_id, question, lang), ("chat", chat_id))
            if tracked.first_reply_at is not None and self.rng.random() < 0.5:
                update = self.press(chat_id, "fb", lambda buttons: self.rng.choice(
                    [b for b in buttons if b.endswith((":up", ":down"))] or buttons))
                if update is not None:
                    await self.send("callback", update, ("callback", update["callback_query"]["id"]))
            await asyncio.sleep(self.args.question_gap_s)

    async def saboteur(self) -> None:
        """One 429 (retry after 1 s), 500 or 502 on one Bot API method every ``--fault-every-s``."""
        while self.args.fault_every_s > 0 and time.monotonic() < self.stop_at:
            await asyncio.sleep(self.args.fault_every_s)
            method = self.rng.choice(FAULT_METHODS)
            status = self.rng.choice((429, 500, 502))
            self.stub.inject(method, Fault(status=status, retry_after=1 if status == 429 else None))
            self.faults[f"{method}:{status}"] += 1

    async def sampler(self, pid: int) -> None:
        seen = 0
        previous: dict[str, float] = {}
        while True:
            values = proc_sample(pid)
            now = self.now()
            window = self.ledger.answered[seen:]
            seen = len(self.ledger.answered)
            commands = [u.latency for u in window if u.latency is not None and u.kind != "question"]
            questions = [u.latency for u in window if u.latency is not None and u.kind == "question"]
            cpu = values.get("cpu_s")
            period = now - previous.get("t", 0.0)
            self.samples.append({
                "t": round(now, 1),
                "rss_mb": round(values.get("VmRSS", 0.0), 1),
                "rss_anon_mb": round(values.get("RssAnon", 0.0), 1),
                "fds": int(values.get("fds", 0)),
                "threads": int(values.get("threads", 0)),
                "cpu_pct": (round(100 * (cpu - previous["cpu_s"]) / period, 1)
                            if cpu is not None and "cpu_s" in previous and period > 0 else None),
                "updates_sent": len(self.ledger.updates),
                "answered": seen,
                "p95_ms": _ms(commands),
                "question_p95_ms": _ms(questions),
                "load_average": round(os.getloadavg()[0], 2),
            })
            previous = {"t": now, **({"cpu_s": cpu} if cpu is not None else {})}
            if time.monotonic() >= self.stop_at:
                return
            await asyncio.sleep(self.args.sample_s)

    async def run(self) -> None:
        duration = self.args.minutes * 60
        self.started = time.monotonic()
        self.stop_at = self.started + duration
        sampler = asyncio.create_task(self.sampler(self.replica.pid))
        chats = [100_000 + i for i in range(self.args.chats)]
        await asyncio.gather(*(self.user(c) for c in chats), self.asker(), self.saboteur())
        await sampler  # its last sample is at the end of the load
        await asyncio.sleep(2.0)  # a late duplicate would arrive now


def _ms(values: list[float], pct: float = 95) -> float | None:
    return round(percentile(values, pct) * 1000, 1) if values else None


def _growth(baseline: float, final: float) -> float | None:
    return round(100 * (final - baseline) / baseline, 2) if baseline else None


def _slope_per_minute(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope, units per minute: growth over the whole steady part, not two samples."""
    if len(points) < 3:
        return None
    mean_t = sum(t for t, _ in points) / len(points)
    mean_v = sum(v for _, v in points) / len(points)
    var = sum((t - mean_t) ** 2 for t, _ in points)
    return round(60 * sum((t - mean_t) * (v - mean_v) for t, v in points) / var, 2) if var else None


def report(load: Soak, duration: float, log: str, exit_code: int | None, alive: bool) -> dict[str, Any]:
    args = load.args
    updates = load.ledger.updates
    lost = [u for u in updates if u.latency is None or u.latency > args.grace_s]
    duplicated = [u for u in updates if u.replies > 1]
    statuses = Counter(s for u in updates for s in u.statuses)
    http_5xx = sum(n for s, n in statuses.items() if 500 <= s < 599)
    failed_deliveries = statuses.get(599, 0)  # timeouts, refused connections
    bot_log = log_errors(log)
    errors = len(bot_log["errors"]) + http_5xx + failed_deliveries
    every_kind = max(load.first_answer_at.values(), default=0.0)
    warmup = max(args.warmup_share * duration, every_kind)
    samples = load.samples
    steady = [s for s in samples if s["t"] >= warmup] or samples[-1:]
    baseline, final = steady[0], steady[-1]
    by_kind: dict[str, list[float]] = defaultdict(list)
    for u in updates:
        if u.latency is not None:
            by_kind[u.kind].append(u.latency)
    remaining_faults = sum(len(q) for q in load.stub._faults.values())
    return {
        "minutes": args.minutes,
        "model": Path(MODELS.get(args.model, Path(args.model))).name,
        "chats": args.chats,
        "database": "sqlite" + (" + redis" if args.redis_url else ""),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "updates": len(updates),
        "updates_by_kind": dict(Counter(u.kind for u in updates).most_common()),
        "updates_per_s": round(len(updates) / duration, 2),
        "redelivered": dict(Counter(u.redelivery for u in updates if u.redelivery)),
        "answered": len(updates) - len(lost),
        "lost": len(lost),
        "duplicated": len(duplicated),
        "lost_examples": [{"update_id": u.update_id, "kind": u.kind, "statuses": u.statuses} for u in lost[:5]],
        "duplicated_examples": [{"update_id": u.update_id, "kind": u.kind, "replies": u.replies,
                                 "redelivery": u.redelivery} for u in duplicated[:5]],
        "slowest": [{"kind": u.kind, "text": u.text, "ms": round(1000 * (u.latency or 0.0)), "at_s": round(
            u.sent_at - load.started, 1)} for u in sorted(updates, key=lambda u: -(u.latency or 0.0))[:5]],
        # aiogram acknowledged the webhook after 55 s and finished the update in the background
        "question_examples": [{"q": u.text, "ms": round(1000 * (u.latency or 0.0)), "reply": u.reply}
                              for u in updates if u.kind == "question"][:4],
        "slow_webhook_warnings": log.count("Detected slow response into webhook"),
        "unattributed_replies": len(load.ledger.unattributed),
        "unattributed_examples": load.ledger.unattributed[:5],
        "errors": errors,
        "error_detail": {"bot_log_errors": len(bot_log["errors"]), "tracebacks": bot_log["tracebacks"],
                         "http_5xx": http_5xx, "failed_deliveries": failed_deliveries,
                         "examples": bot_log["errors"][:5]},
        "webhook_statuses": {str(s): n for s, n in sorted(statuses.items())},
        "bot_warnings": bot_log["warnings"],
        "faults_injected": dict(load.faults),
        "faults_hit": sum(load.faults.values()) - remaining_faults,
        "latency_ms": {kind: {"n": len(v), "p50": _ms(v, 50), "p95": _ms(v, 95), "p99": _ms(v, 99)}
                       for kind, v in sorted(by_kind.items())},
        "warmup_s": round(warmup, 1),
        "rss_mb": {"start": samples[0]["rss_mb"], "baseline": baseline["rss_mb"], "final": final["rss_mb"],
                   "peak_after_warmup": max(s["rss_mb"] for s in steady)},
        "rss_growth_pct": _growth(baseline["rss_mb"], final["rss_mb"]),
        "rss_anon_growth_pct": _growth(baseline["rss_anon_mb"], final["rss_anon_mb"]),
        "rss_mb_per_min_after_warmup": _slope_per_minute([(s["t"], s["rss_mb"]) for s in steady]),
        "fds": {"baseline": baseline["fds"], "final": final["fds"], "max": max(s["fds"] for s in samples)},
        "fd_growth": final["fds"] - baseline["fds"],
        "threads": {"baseline": baseline["threads"], "final": final["threads"]},
        "bot_alive_at_end": alive,
        "bot_exit_code": exit_code,
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "samples": samples,
    }


async def soak(args: argparse.Namespace, model: Path) -> dict[str, Any]:
    ledger = Ledger()
    stub = soak_stub(ledger)
    await stub.start()
    with tempfile.TemporaryDirectory(prefix="anchorgpu-soak-") as tmp:
        work = Path(tmp)
        state = work / "state"
        state.mkdir()
        (state / "models").symlink_to(REPO_ROOT / "var" / "models", target_is_directory=True)
        if args.index.is_dir():  # the bot only syncs what changed (nothing, by content hash)
            shutil.copytree(args.index, state / "chroma")
        env = replica_env(stub_url=stub.base_url, state=state, port=free_port(),
                          db_url=f"sqlite+aiosqlite:///{state / 'soak.db'}", redis_url=args.redis_url,
                          chroma_url=None, llm_base_url=None, LLM_MODEL_PATH=str(model),
                          LLM_MAX_TOKENS=str(args.llm_max_tokens), ANCHORGPU_LOG_JSON="true",
                          ANCHORGPU_LOG_LEVEL=args.log_level,
                          TELEGRAM_RATE_LIMIT_PER_MINUTE="1000000", TELEGRAM_CHAT_RATE_LIMIT_PER_MINUTE="1000000")
        if args.prompt_cache_mb is not None:
            env["LLM_PROMPT_CACHE_MB"] = str(args.prompt_cache_mb)
        replica = Replica("soak", env, work / "bot.log")
        replica.start()
        try:
            boot = time.monotonic()
            await replica.wait_ready()
            booted_s = time.monotonic() - boot
            async with aiohttp.ClientSession() as session:
                load = Soak(args, stub, ledger, replica, session)
                await load.run()
            alive = replica.alive()
        finally:
            await replica.stop()
            await stub.stop()
        assert replica.proc is not None
        log = replica.log()
        if args.log is not None:
            args.log.parent.mkdir(parents=True, exist_ok=True)
            args.log.write_text(log)
    result = report(load, args.minutes * 60, log, replica.proc.returncode, alive)
    result["bot_started_s"] = round(booted_s, 1)
    return result
