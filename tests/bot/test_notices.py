"""Notices for one group member (bot/output/notices.py) and the stop plumbing, through the Bot API stub over HTTP."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest
from aiogram.types import CallbackQuery, Message

from bot.delivery.generations import Generations
from bot.output.notices import Notices, PersonalNotice
from bot.output.streaming import AnswerStream, ChatPacer, Target
from bot.ui.callbacks import StopAnswer
from bot.ui.keyboards import stop_keyboard
from dev.telegram_stub import BOT_ID, TelegramStub
from models.queue import RequestCancelledError, RequestQueue

GROUP = -3001


def _message(bot: Bot, chat_id: int, user_id: int, message_id: int = 10) -> Message:
    chat: dict[str, Any] = {"id": chat_id, "type": "supergroup" if chat_id < 0 else "private"}
    return Message.model_validate({"message_id": message_id, "date": int(time.time()), "chat": chat, "text": "hi",
                                   "from": {"id": user_id, "is_bot": False, "first_name": "T"}},
                                  context={"bot": bot})


def _press(stub: TelegramStub, bot: Bot, chat_id: int, user_id: int, query_id: str = "q-1") -> CallbackQuery:
    message = {"message_id": 11, "date": int(time.time()), "chat": {"id": chat_id, "type": "supergroup"},
               "text": "answer"}
    stub._issue_callback(query_id, user_id, message)
    return CallbackQuery.model_validate({"id": query_id, "chat_instance": "ci", "data": "x", "message": message,
                                         "from": {"id": user_id, "is_bot": False, "first_name": "T"}},
                                        context={"bot": bot})


async def test_an_admin_bot_sends_a_members_notice_ephemerally(stub: TelegramStub, api_bot: Bot) -> None:
    stub.admins[GROUP].add(BOT_ID)
    sent = await Notices().to_sender(_message(api_bot, GROUP, 42), "only for you")
    assert sent is not None and sent.message_id == 0 and sent.ephemeral_message_id
    assert sent.receiver_user is not None and sent.receiver_user.id == 42
    assert [m["text"] for m in stub.ephemeral_to(42, GROUP)] == ["only for you"]
    assert not stub.bot_messages(GROUP), "nothing anyone else can see"


async def test_a_refused_notice_becomes_a_reply_and_the_chat_is_not_asked_again(
        stub: TelegramStub, api_bot: Bot) -> None:
    notices = Notices()
    first = await notices.to_sender(_message(api_bot, GROUP, 42), "slow down")
    assert first is not None and first.message_id != 0  # a reply everybody sees
    sends = stub.calls_to("sendMessage", GROUP)
    assert ["ephemeral_message_parameters" in c.params for c in sends] == [True, False]
    assert sends[1].params["reply_parameters"]["message_id"] == 10
    await notices.to_sender(_message(api_bot, GROUP, 43, message_id=12), "slow down")
    sends = stub.calls_to("sendMessage", GROUP)
    assert len(sends) == 3 and "ephemeral_message_parameters" not in sends[2].params, "refusal remembered"
    # private chats never try: ephemeral messages are for groups
    await notices.to_sender(_message(api_bot, 77, 77), "slow down")
    assert ["ephemeral_message_parameters" in c.params for c in stub.calls_to("sendMessage", 77)] == [False]


async def test_a_button_notice_is_ephemeral_for_any_bot_and_an_alert_when_refused(
        stub: TelegramStub, api_bot: Bot) -> None:
    notices = Notices()
    await notices.to_presser(_press(stub, api_bot, GROUP, 55), "not your button")
    [shown] = stub.ephemeral_to(55, GROUP)
    assert shown["text"] == "not your button"
    assert stub.calls_to("sendMessage", GROUP)[0].params["ephemeral_message_parameters"]["callback_query_id"] == "q-1"
    assert "text" not in stub.calls_to("answerCallbackQuery")[0].params, "the spinner stopped, quietly"

    stale = _press(stub, api_bot, GROUP, 56, query_id="q-old")
    stub.issued_callbacks["q-old"].ts -= 20  # past the 15 s an eligible action lasts
    await notices.to_presser(stale, "not your button")
    assert not stub.ephemeral_to(56, GROUP)
    alert = stub.calls_to("answerCallbackQuery")[-1].params
    assert alert["text"] == "not your button" and alert["show_alert"] is True


async def test_a_queue_notice_is_kept_current_then_removed(stub: TelegramStub, api_bot: Bot) -> None:
    stub.admins[GROUP].add(BOT_ID)
    notice = PersonalNotice(Notices(), api_bot, GROUP, 42, None)
    assert await notice.show("#3 in the queue")
    notice._edited_at -= 10  # edits are paced; pretend the pause is over
    assert await notice.show("#2 in the queue")
    assert [m["text"] for m in stub.ephemeral_to(42, GROUP)] == ["#2 in the queue"]
    await notice.close()
    assert not stub.ephemeral_to(42, GROUP)
    refused = PersonalNotice(Notices(), api_bot, -3002, 42, None)
    assert not await refused.show("#1 in the queue"), "not an admin there: the caller shows it itself"


async def test_drafts_carry_a_stop_button_and_groups_refuse_drafts(stub: TelegramStub, api_bot: Bot) -> None:
    target = Target(chat_id=301, thread_id=None, reply_to_message_id=None, is_private=True)
    async with AnswerStream(api_bot, target, "en", ChatPacer(draft_interval_s=0.05)) as stream:
        stream.delta("First sentence. ")
        await asyncio.sleep(0.2)
        stream.halt()
        stream.delta("Second sentence. ")
        await asyncio.sleep(0.2)
        await stream.finish("First sentence.")
    drafts = stub.calls_to("sendMessageDraft", 301)
    assert [d.params["text"] for d in drafts] == ["First sentence. "], "nothing after the stop"
    assert drafts[0].params["can_stop"] is True and drafts[0].params["keep_on_stop"] is True
    assert not stub.drafts, "the final message dismissed the draft"
    try:
        await api_bot.send_message_draft(chat_id=GROUP, draft_id=5, text="x")
    except TelegramBadRequest as exc:
        assert "TEXTDRAFT_PEER_INVALID" in exc.message
    else:
        raise AssertionError("a group draft was accepted")


async def test_the_group_stop_button_rides_on_the_placeholder_and_goes_with_the_stream(
        stub: TelegramStub, api_bot: Bot) -> None:
    target = Target(chat_id=GROUP, thread_id=None, reply_to_message_id=5, is_private=False)
    markup = stop_keyboard(123, 42, "ru")
    async with AnswerStream(api_bot, target, "ru", ChatPacer(group_interval_s=0.05), stop_markup=markup,
                            draft_id=123) as stream:
        stream.delta("Первое предложение. ")
        await asyncio.sleep(0.2)
        stream.delta("Второе. ")
        await asyncio.sleep(0.2)
        await stream.finish("Первое предложение. Второе.")
    [placeholder] = stub.calls_to("sendMessage", GROUP)
    button = placeholder.params["reply_markup"]["inline_keyboard"][0][0]
    assert button["style"] == "danger" and StopAnswer.unpack(button["callback_data"]) == StopAnswer(g=123, u=42)
    edits = stub.calls_to("editMessageText", GROUP)
    assert all(e.params["reply_markup"] == placeholder.params["reply_markup"] for e in edits[:-1])
    assert stub.bot_messages(GROUP)[0]["reply_markup"] == {"inline_keyboard": []}


async def test_a_stop_cancels_that_generation_only() -> None:
    queue = RequestQueue(parallel=1)
    generations = Generations()
    mine = generations.start(100, 7, user_id=100)
    other = generations.start(100, 8, user_id=100)
    running = queue.enqueue("100", tag="chat:100", key=mine.key)
    waiting = queue.enqueue("100", tag="chat:100", key=other.key)

    class Answerer:
        def cancel(self, key: str) -> int:
            return queue.cancel(key)

    halted: list[bool] = []
    mine.on_stop = lambda: halted.append(True)
    assert generations.stop(100, 7, Answerer()) is mine and halted == [True]
    assert running.cancel.is_set() and not waiting.cancel.is_set()
    assert generations.stop(100, 999, Answerer()) is None
    running.release()
    async for _ in waiting.wait_turn():
        pass
    assert waiting.granted, "the slot went to the next answer"
    # a stop before the answer reached the queue is applied when it does
    early = generations.start(100, 9, user_id=100)
    generations.stop(100, 9, Answerer())
    late = queue.enqueue("100", key=early.key)
    early.apply_stop(Answerer())
    try:
        async for _ in late.wait_turn():
            pass
    except RequestCancelledError:
        pass
    else:
        raise AssertionError("the early stop was lost")
