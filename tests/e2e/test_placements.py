"""Placements in Telegram end to end: the bot as a real process against the Bot API stub (SQLite file).

Quote → «Арендовать» → confirm (a double tap: one placement) → /placements → stop (the rule, paid period
unchanged) → start → extend; a group's placements belong to the chat and only its admins control them;
reminders 24 h before the end and at expiry arrive once, also with two bot processes on one database.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

from dev.telegram_stub import Call, TelegramStub
from tests.conftest import BotProcess
from tests.e2e.telegram_helpers import refusal_text
from tests.e2e.test_quote import NO_LIMITS, buttons, find_message, press, wait_ready

T0 = "2026-12-01T12:00:00Z"
RULE_RU = "остановка не приостанавливает оплаченный период"


def clock_env(tmp_path: Path, instant: str = T0) -> tuple[Path, dict[str, str]]:
    clock = tmp_path / "clock.txt"
    clock.write_text(instant)
    return clock, {**NO_LIMITS, "ANCHORGPU_CLOCK_FILE": str(clock), "TELEGRAM_PLACEMENT_REMINDER_INTERVAL_S": "0.5"}


def placements_in_db(state_dir: Path, owner: str) -> list[tuple[str, str, str | None, int]]:
    with sqlite3.connect(state_dir / "anchorgpu.db") as conn:
        return [(r[0], r[1], r[2], int(r[3])) for r in conn.execute(
            "SELECT id, state, paid_until, version FROM placements WHERE owner = ? ORDER BY created_at", (owner,))]


def button_with(stub: TelegramStub, chat_id: int, message_id: int, prefix: str) -> str:
    found = [data for data in buttons(stub, chat_id, message_id) if data.startswith(prefix)]
    assert found, (prefix, buttons(stub, chat_id, message_id))
    return found[0]


def _in(chat_id: int, needle: str) -> Callable[[Call], bool]:
    return lambda c: c.params.get("chat_id") == chat_id and needle in str(c.params.get("text", ""))


async def rent_from_quote(stub: TelegramStub, chat_id: int, user_id: int, text: str = "/quote h100 x8 1 week "
                          "committed", chat_type: str = "private") -> tuple[int, str]:
    """Ask for a quote and press «Арендовать»; returns the confirmation message and its confirm button."""
    stub.message_update(text, chat_id=chat_id, user_id=user_id, chat_type=chat_type)
    await stub.wait_for("sendMessage", _in(chat_id, "Расчёт Q-"))
    quote_msg = find_message(stub, chat_id, "Расчёт Q-")
    rent = button_with(stub, chat_id, quote_msg, "rent:Q-")
    answer = await press(stub, chat_id, quote_msg, rent, user_id=user_id)
    assert not answer.params.get("show_alert"), answer.params
    confirm_msg = find_message(stub, chat_id, "Арендовать")
    return confirm_msg, button_with(stub, chat_id, confirm_msg, "rentc:1:")


async def test_rent_list_stop_start_extend_in_a_private_chat(
        stub: TelegramStub, bot_factory: Callable[..., BotProcess], state_dir: Path, tmp_path: Path) -> None:
    chat = 801
    _, env = clock_env(tmp_path)
    bot = bot_factory(**env)
    await wait_ready(stub, chat)
    confirm_msg, confirm = await rent_from_quote(stub, chat, chat)
    text = str((stub.message(chat, confirm_msg) or {})["text"])
    assert "1 неделя" in text and "USD" in text and RULE_RU in text, text
    assert "rentc:0:" in " ".join(buttons(stub, chat, confirm_msg))

    # a double tap on Confirm: both taps are answered, one placement
    before = len(stub.calls_to("answerCallbackQuery"))
    message = stub.message(chat, confirm_msg)
    assert message is not None
    stub.callback_update(confirm, message=message, user_id=chat)
    stub.callback_update(confirm, message=message, user_id=chat)
    await stub.wait_for("answerCallbackQuery", timeout=30, count=before + 2)
    [(pid, state, paid_until, version)] = placements_in_db(state_dir, f"tg:{chat}")
    assert state == "running" and paid_until is not None and version == 1, bot.log()[-3000:]
    rented = str((stub.message(chat, confirm_msg) or {})["text"])
    assert "Размещение создано" in rented and pid in rented

    stub.message_update("/placements", chat_id=chat, user_id=chat)
    await stub.wait_for("sendMessage", _in(chat, "Ваши размещения"))
    listing = find_message(stub, chat, "Ваши размещения")
    assert pid in str((stub.message(chat, listing) or {})["text"])
    stop = button_with(stub, chat, listing, f"pl:stop:{pid}:")
    assert button_with(stub, chat, listing, f"pl:week:{pid}:1") and button_with(stub, chat, listing, "pl:month:")
    stop_button = next(b for row in (stub.message(chat, listing) or {})["reply_markup"]["inline_keyboard"]
                       for b in row if b["callback_data"] == stop)
    assert stop_button.get("style") == "danger"

    await press(stub, chat, listing, stop)
    ask = find_message(stub, chat, "Остановить размещение")
    assert RULE_RU in str((stub.message(chat, ask) or {})["text"]).lower()
    await press(stub, chat, ask, button_with(stub, chat, ask, "pl:stopok:"))
    stopped = str((stub.message(chat, ask) or {})["text"])
    assert "Остановлено" in stopped and RULE_RU in stopped.lower(), stopped
    [(_, state, paid_after_stop, version)] = placements_in_db(state_dir, f"tg:{chat}")
    assert state == "stopped" and paid_after_stop == paid_until and version == 2

    # the stale start/extend buttons of the old listing are refused; the stop result has fresh ones
    stale = await press(stub, chat, listing, button_with(stub, chat, listing, "pl:week:"))
    assert "устарела" in stale.params.get("text", "")
    await press(stub, chat, ask, button_with(stub, chat, ask, f"pl:start:{pid}:2"))
    await stub.wait_for("sendMessage", _in(chat, "снова работает"))
    started = find_message(stub, chat, "снова работает")
    week = button_with(stub, chat, started, f"pl:week:{pid}:3")
    await press(stub, chat, started, week)
    await stub.wait_for("sendMessage", _in(chat, "Продлено"))
    again = await press(stub, chat, started, week)  # a second tap on the same button: no second extension
    assert "устарела" in again.params.get("text", "") or "Уже сделано" in again.params.get("text", "")
    [(_, state, extended_until, version)] = placements_in_db(state_dir, f"tg:{chat}")
    assert state == "running" and version == 4 and extended_until is not None
    assert extended_until > paid_until and extended_until.startswith("2026-12-15"), extended_until

    # another owner's placement id reads like a wrong one
    other = 802
    stub.message_update("/placements", chat_id=other, user_id=other)
    await stub.wait_for("sendMessage", _in(other, "Размещений пока нет"))
    empty = find_message(stub, other, "Размещений пока нет")
    refused = await press(stub, other, empty, f"pl:stop:{pid}:4", user_id=other)
    assert "не найдено" in refused.params.get("text", "") and refused.params.get("show_alert")
    garbage = await press(stub, other, empty, "pl:stop:../../x:zz", user_id=other)
    assert garbage.params.get("text"), garbage.params


async def test_group_placements_belong_to_the_chat_and_only_admins_control_them(
        stub: TelegramStub, bot_factory: Callable[..., BotProcess], state_dir: Path, tmp_path: Path) -> None:
    group, admin, member = -1009, 901, 902
    stub.admins[group].add(admin)
    _, env = clock_env(tmp_path)
    bot = bot_factory(**env)
    await wait_ready(stub, admin)

    # a member's Rent (even under their own quote) is refused politely; nothing is created
    confirm_msg, _ = await rent_from_quote(stub, group, admin, chat_type="supergroup")
    quote_msg = find_message(stub, group, "Расчёт Q-")
    refused = await press(stub, group, quote_msg, button_with(stub, group, quote_msg, "rent:Q-"), user_id=member)
    assert "администраторы" in refusal_text(stub, group, member, refused), refused.params
    refused = await press(stub, group, confirm_msg, button_with(stub, group, confirm_msg, "rentc:1:"),
                          user_id=member)
    assert "администраторы" in refusal_text(stub, group, member, refused)
    assert placements_in_db(state_dir, f"tg-chat:{group}") == []

    ok = await press(stub, group, confirm_msg, button_with(stub, group, confirm_msg, "rentc:1:"), user_id=admin)
    assert not ok.params.get("show_alert"), (ok.params, bot.log()[-3000:])
    [(pid, _, _, _)] = placements_in_db(state_dir, f"tg-chat:{group}")
    assert placements_in_db(state_dir, f"tg:{admin}") == []  # the chat's, not the admin's

    # every member lists them; only an admin stops
    stub.message_update("/placements", chat_id=group, user_id=member, chat_type="supergroup")
    await stub.wait_for("sendMessage", _in(group, pid))
    listing = find_message(stub, group, "Ваши размещения")
    stop = button_with(stub, group, listing, f"pl:stop:{pid}:")
    refused = await press(stub, group, listing, stop, user_id=member)
    assert "администраторы" in refusal_text(stub, group, member, refused)
    await press(stub, group, listing, stop, user_id=admin)
    ask = find_message(stub, group, "Остановить размещение")
    refused = await press(stub, group, ask, button_with(stub, group, ask, "pl:stopok:"), user_id=member)
    assert "администраторы" in refusal_text(stub, group, member, refused)
    assert placements_in_db(state_dir, f"tg-chat:{group}")[0][1] == "running"
    await press(stub, group, ask, button_with(stub, group, ask, "pl:stopok:"), user_id=admin)
    assert placements_in_db(state_dir, f"tg-chat:{group}")[0][1] == "stopped"
    assert "Остановлено" in str((stub.message(group, ask) or {})["text"])

    # the chat's creator controls them too (getChatMember status "creator")
    creator = 903
    stub.creators[group].add(creator)
    await press(stub, group, ask, button_with(stub, group, ask, f"pl:start:{pid}:2"), user_id=creator)
    await stub.wait_for("sendMessage", _in(group, "снова работает"))
    assert placements_in_db(state_dir, f"tg-chat:{group}")[0][1] == "running"


async def test_reminders_are_sent_once_by_two_bot_processes(
        stub: TelegramStub, bot_factory: Callable[..., BotProcess], state_dir: Path, tmp_path: Path) -> None:
    chat = 811
    clock, env = clock_env(tmp_path)
    first = bot_factory(**env)
    await wait_ready(stub, chat)
    confirm_msg, confirm = await rent_from_quote(stub, chat, chat)
    await press(stub, chat, confirm_msg, confirm)
    [(pid, _, paid_until, _)] = placements_in_db(state_dir, f"tg:{chat}")
    assert paid_until is not None and paid_until.startswith("2026-12-08 12:00"), paid_until
    second = bot_factory(**env)
    await wait_ready(stub, chat + 1)
    await asyncio.sleep(2)
    assert not [c for c in stub.calls_to("sendMessage", chat) if "⏰" in c.params["text"]]

    clock.write_text("2026-12-07T12:00:30Z")  # 24 h before paid_until (and a little)
    await stub.wait_for("sendMessage", _in(chat, "⏰"), timeout=30)
    await asyncio.sleep(3)  # several polls of both processes
    soon = [c for c in stub.calls_to("sendMessage", chat) if "⏰" in c.params["text"]]
    assert len(soon) == 1 and pid in soon[0].params["text"] and "24 ч" in soon[0].params["text"]

    # a restart does not send it again; the expiry arrives once too
    assert await first.stop() == 0
    bot_factory(**env)
    clock.write_text("2026-12-08T12:01:00Z")
    await stub.wait_for("sendMessage", _in(chat, "⌛"), timeout=180)
    await asyncio.sleep(3)
    expired = [c for c in stub.calls_to("sendMessage", chat) if "⌛" in c.params["text"]]
    assert len(expired) == 1 and len([c for c in stub.calls_to("sendMessage", chat) if "⏰" in c.params["text"]]) == 1
    assert second.proc is not None and second.proc.poll() is None
    with sqlite3.connect(state_dir / "anchorgpu.db") as conn:
        rows = conn.execute("SELECT kind, sent_at IS NOT NULL FROM placement_reminders WHERE placement_id = ?"
                            " ORDER BY kind", (pid,)).fetchall()
    assert rows == [("expired", 1), ("soon", 1)]


def lease_holder(state_dir: Path, name: str) -> str | None:
    with sqlite3.connect(state_dir / "anchorgpu.db") as conn:
        row = conn.execute("SELECT owner FROM leases WHERE name = ?", (name,)).fetchone()
    return row[0] if row else None


async def test_a_killed_reminder_poller_is_taken_over(
        stub: TelegramStub, bot_factory: Callable[..., BotProcess], state_dir: Path, tmp_path: Path) -> None:
    """Issue 17: one process polls at a time (the lease); SIGKILL it and the other one sends the reminder."""
    chat = 821
    clock, env = clock_env(tmp_path)
    env["LEASE_TTL_S"] = "2"
    bots = [bot_factory(**env), bot_factory(**env)]
    for _ in range(1800):  # both serve updates (and ask for the lease)
        if all(" ready" in b.log() for b in bots):
            break
        await asyncio.sleep(0.1)
    assert all(" ready" in b.log() for b in bots), [b.log()[-2000:] for b in bots]
    confirm_msg, confirm = await rent_from_quote(stub, chat, chat)
    await press(stub, chat, confirm_msg, confirm)
    holder = lease_holder(state_dir, "placement-reminders")
    assert holder is not None
    [killed] = [b for b in bots if b.proc is not None and holder.endswith(f":{b.proc.pid}")]
    [survivor] = [b for b in bots if b is not killed]
    assert killed.proc is not None and survivor.proc is not None
    killed.proc.kill()  # no shutdown: the lease is not released, it has to expire
    assert killed.proc.wait() == -9

    clock.write_text("2026-12-07T12:00:30Z")  # 24 h before paid_until
    await stub.wait_for("sendMessage", _in(chat, "⏰"), timeout=30)
    await asyncio.sleep(2)
    assert len([c for c in stub.calls_to("sendMessage", chat) if "⏰" in c.params["text"]]) == 1
    assert lease_holder(state_dir, "placement-reminders") == f"{holder.rsplit(':', 1)[0]}:{survivor.proc.pid}"
