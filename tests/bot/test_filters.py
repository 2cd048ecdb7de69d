"""Group addressing: answer only /ask, /cmd@ourbot, replies to us and explicit mentions."""

from __future__ import annotations

from typing import Any

import pytest
from aiogram.types import Message

from bot.filters import addressed_question, thread_of
from rag.answering.conversation import conversation_key

BOT_ID = 7000000001
USERNAME = "anchorgpu_test_bot"


def message(text: str, *, chat_type: str = "supergroup", entities: list[dict[str, Any]] | None = None,
            reply_from: int | None = None, thread_id: int | None = None) -> Message:
    data: dict[str, Any] = {
        "message_id": 10, "date": 0, "text": text,
        "chat": {"id": -100 if chat_type != "private" else 5, "type": chat_type},
        "from": {"id": 5, "is_bot": False, "first_name": "U"},
    }
    if entities:
        data["entities"] = entities
    if reply_from is not None:
        data["reply_to_message"] = {"message_id": 9, "date": 0, "chat": data["chat"], "text": "earlier",
                                    "from": {"id": reply_from, "is_bot": reply_from == BOT_ID, "first_name": "X"}}
    if thread_id is not None:
        data["message_thread_id"] = thread_id
        data["is_topic_message"] = True
    return Message.model_validate(data)


def ask(msg: Message) -> str | None:
    return addressed_question(msg, BOT_ID, USERNAME)


def test_private_plain_text_is_a_question() -> None:
    assert ask(message("  what is vLLM? ", chat_type="private")) == "what is vLLM?"


@pytest.mark.parametrize("text", ["hello team", "what is a KV cache?", "@someone_else look", "/fit llama"])
def test_group_chatter_is_not_answered(text: str) -> None:
    assert ask(message(text)) is None


def test_reply_to_another_user_is_not_answered() -> None:
    assert ask(message("and its memory?", reply_from=42)) is None


def test_reply_to_our_message_is_a_question() -> None:
    assert ask(message("and its memory?", reply_from=BOT_ID)) == "and its memory?"


def test_explicit_mention_is_a_question_with_the_mention_removed() -> None:
    text = f"@{USERNAME}, what is GQA?"
    entities = [{"type": "mention", "offset": 0, "length": len(USERNAME) + 1}]
    assert ask(message(text, entities=entities)) == "what is GQA?"
    assert ask(message(f"what is GQA @{USERNAME.upper()}")) == "what is GQA"


def test_text_mention_of_the_bot_counts() -> None:
    entities = [{"type": "text_mention", "offset": 0, "length": 3,
                 "user": {"id": BOT_ID, "is_bot": True, "first_name": "AnchorGPU"}}]
    assert ask(message("Bot what is NVLink?", entities=entities)) == "Bot what is NVLink?"


def test_forum_topics_keep_their_thread_and_context() -> None:
    in_topic = message("q", thread_id=77)
    assert thread_of(in_topic) == 77
    # the ask router keys the conversation history by chat and topic, as here
    assert conversation_key(in_topic.chat.id, thread_of(in_topic)) == "-100:77"
    outside = message("q")
    assert thread_of(outside) is None
    assert conversation_key(outside.chat.id, thread_of(outside)) == "-100"
