"""Feedback and admin commands end to end: the bot a real process against the Bot API stub, its SQLite file
read back by `anchorgpu report --json` as an operator runs it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable

from dev.telegram_stub import BOT_USERNAME, TelegramStub, parse_html
from tests.conftest import REPO_ROOT, BotProcess
from tests.e2e.telegram_helpers import group_message
from tests.e2e.test_quote import NO_LIMITS, buttons, find_message, press, wait_ready

ADMIN = 9001


def report_json(bot: BotProcess) -> dict[str, object]:
    env = {k: v for k, v in bot.env.items()}
    env["PYTHONPATH"] = str(REPO_ROOT)
    result = subprocess.run([sys.executable, "-m", "anchorgpu", "report", "--json"], capture_output=True,
                            text=True, env=env, cwd=REPO_ROOT, timeout=180)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def _answer_to(chat_id: int, needle: str) -> Callable[..., bool]:
    return lambda c: c.params.get("chat_id") == chat_id and needle in str(c.params.get("text", ""))


async def test_a_downvote_in_telegram_shows_up_in_the_report(stub: TelegramStub,
                                                             bot_factory: Callable[..., BotProcess]) -> None:
    bot = bot_factory(**NO_LIMITS, TELEGRAM_ADMIN_IDS=f"[{ADMIN}]", FEEDBACK_USER_SALT="e2e-salt")
    await wait_ready(stub, 7301)
    stub.message_update("что такое KV-кэш?", chat_id=7301, user_id=7301)
    await stub.wait_for("sendMessage", _answer_to(7301, "Источники"), timeout=240)
    message_id = find_message(stub, 7301, "Источники")
    data = buttons(stub, 7301, message_id)
    assert len(data) == 3 and all(d.startswith("fb:") for d in data), bot.log()[-2000:]
    up, down, wrong = data
    await press(stub, 7301, message_id, up)
    await press(stub, 7301, message_id, down)  # changed: one vote, now 👎

    # «неверно» from another user asks for a reason; the reply is stored with the vote
    await press(stub, 7301, message_id, wrong, user_id=7302)
    prompt = await stub.wait_for("sendMessage", _answer_to(7301, "Что в ответе неверно"), timeout=30)
    assert prompt[-1].params["reply_markup"]["force_reply"] is True
    stub.message_update("путает кэш с весами", chat_id=7301, user_id=7302)
    await stub.wait_for("sendMessage", _answer_to(7301, "причина записана"), timeout=30)

    # in a group too: the answer (a reply in the group) carries the buttons
    group_message(stub, f"@{BOT_USERNAME} что такое NVLink?", chat_id=-7320, user_id=7321)
    await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == -7320, timeout=120)
    for _ in range(600):  # a group answer may stream into a placeholder first: the buttons come with the final
        in_group = [m for m in stub.bot_messages(-7320) if "fb:" in json.dumps(m.get("reply_markup") or {})]
        if in_group:
            break
        await asyncio.sleep(0.2)
    assert in_group, bot.log()[-2000:]
    group_up = buttons(stub, -7320, int(in_group[-1]["message_id"]))[0]
    await press(stub, -7320, int(in_group[-1]["message_id"]), group_up, user_id=7321)

    report = report_json(bot)
    assert report["feedback"] == {"up": 1, "down": 2, "wrong": 1}, report
    downvoted = [c for c in report["clusters"] if c["kind"] == "downvoted"]  # type: ignore[union-attr,index]
    assert downvoted and downvoted[0]["count"] == 2 and downvoted[0]["examples"] == ["что такое KV-кэш?"]
    assert downvoted[0]["nearest"], "the nearest entries were logged with the answer"


async def test_admin_works_for_an_admin_and_is_refused_for_others(stub: TelegramStub,
                                                                  bot_factory: Callable[..., BotProcess]) -> None:
    bot_factory(**NO_LIMITS, TELEGRAM_ADMIN_IDS=f"[{ADMIN}]", FEEDBACK_USER_SALT="e2e-salt")
    await wait_ready(stub, 7311)
    stub.message_update("как испечь блины?", chat_id=7311, user_id=7311)  # out of scope: a gap
    await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 7311 and "fb:" in json.dumps(
        c.params.get("reply_markup") or {}), timeout=120)

    stub.message_update("/admin", chat_id=ADMIN, user_id=ADMIN)
    status = parse_html((await stub.wait_for("sendMessage", _answer_to(ADMIN, "Состояние бота"),
                                             timeout=60))[-1].params["text"])
    assert "база данных: да" in status and "Redis: не используется" in status and "Очередь LLM" in status
    assert "без ответа 1" in status and "как испечь блины?" in status

    stub.message_update("/report", chat_id=ADMIN, user_id=ADMIN)
    await stub.wait_for("sendPhoto", lambda c: c.params.get("chat_id") == ADMIN, timeout=120)
    assert any("1× [unanswered] как испечь блины?" in t for t in stub.sent_texts(ADMIN))

    for command in ("/admin", "/report"):
        stub.message_update(command, chat_id=7312, user_id=7312)
    refused = await stub.wait_for("sendMessage", lambda c: c.params.get("chat_id") == 7312, count=2, timeout=60)
    assert all("Неизвестная команда" in c.params["text"] for c in refused)
    assert not stub.calls_to("sendPhoto", 7312)
    menus = " ".join(json.dumps(c.params.get("commands")) for c in stub.calls_to("setMyCommands"))
    assert menus and '"admin"' not in menus and '"report"' not in menus
