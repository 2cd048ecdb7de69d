"""The conversation memory the answerer and the fronts share: the turns a follow-up leans on.

A thin, forgiving layer over a :class:`rag.answering.conversation.ConversationStore`: history is a
convenience, so a store that fails (or none at all) reads as an empty conversation and a turn that cannot be
stored is logged, never raised.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from rag.answering.conversation import ConversationStore
from rag.answering.prompt import Turn

log = logging.getLogger(__name__)


def last_user_turn(history: Sequence[Turn]) -> str | None:
    """The user's last question in a conversation's history (what a follow-up follows)."""
    return next((turn.text for turn in reversed(history) if turn.role == "user"), None)


class ConversationMemory:
    def __init__(self, conversations: ConversationStore | None) -> None:
        self.conversations = conversations

    async def remember(self, key: str | None, question: str, text: str) -> None:
        """Store a turn (see :meth:`rag.answering.answerer.Answerer.remember_reply`)."""
        if self.conversations is None or not key:
            return
        try:
            await self.conversations.append(key, question, text)
        except Exception:  # history is a convenience; the reply has been sent
            log.exception("could not store the conversation turn")

    async def previous_questions(self, key: str | None) -> list[str]:
        """The user's earlier questions in this conversation, the last one first."""
        if not key:
            return []
        return [turn.text for turn in reversed(await self.history(key)) if turn.role == "user"]

    async def history(self, key: str) -> list[Turn]:
        """The conversation's stored turns, oldest first (none when there is no store or it fails)."""
        if self.conversations is None:
            return []
        try:
            return await self.conversations.history(key)
        except Exception:
            log.exception("could not read the conversation history")
            return []

    async def aclose(self) -> None:
        if self.conversations is not None:
            await self.conversations.aclose()
