"""Per-user and per-group preferences (language, answer length), stored in the app database.

Reads are cached for a short while: language is resolved for every handled update and must not cost a
database round trip each time; a change made through /settings invalidates the cache at once.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Literal, cast

from sqlalchemy import BigInteger, String, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker
from sqlalchemy.orm import Mapped, mapped_column

from infra.db import Base
from infra.i18n import Lang, pick_lang

AnswerLength = Literal["short", "normal", "long"]
ANSWER_LENGTHS: tuple[AnswerLength, ...] = ("short", "normal", "long")
LANGS: tuple[Lang, ...] = ("ru", "en")
# Share of the configured LLM token budget each answer length may use.
LENGTH_TOKEN_SHARE: dict[AnswerLength, float] = {"short": 0.4, "normal": 1.0, "long": 2.0}


class PreferenceRow(Base):
    __tablename__ = "bot_preferences"

    # "user:<id>" or "chat:<id>"
    scope: Mapped[str] = mapped_column(String(40), primary_key=True)
    subject_id: Mapped[int] = mapped_column(BigInteger)
    lang: Mapped[str | None] = mapped_column(String(8), nullable=True)
    answer_length: Mapped[str | None] = mapped_column(String(8), nullable=True)


@dataclass(frozen=True)
class Preferences:
    lang: Lang | None = None
    answer_length: AnswerLength | None = None


@dataclass(frozen=True)
class Resolved:
    lang: Lang
    answer_length: AnswerLength
    lang_explicit: bool = False  # chosen in /settings, not guessed from Telegram's language_code


def _prefs(row: PreferenceRow) -> Preferences:
    return Preferences(
        lang=cast(Lang, row.lang) if row.lang in LANGS else None,
        answer_length=cast(AnswerLength, row.answer_length) if row.answer_length in ANSWER_LENGTHS else None,
    )


def scope_for(kind: Literal["user", "chat"], subject_id: int) -> str:
    return f"{kind}:{subject_id}"


class PreferenceStore:
    """Preferences with an in-memory snapshot of the (small) table, reloaded every ``cache_ttl_s``.

    Only users and groups that used /settings have rows, so the whole table is cheap to hold; a lookup
    is then a dict read instead of a query on every update. Writes go to the database and the snapshot
    at once; other replicas see them at their next reload.
    """

    def __init__(self, engine: AsyncEngine, cache_ttl_s: float = 30.0) -> None:
        self._sessions = async_sessionmaker(engine, expire_on_commit=False)
        self._snapshot: dict[str, Preferences] = {}
        self._loaded_at = float("-inf")
        self._ttl = cache_ttl_s
        self._lock = asyncio.Lock()

    async def _reload(self) -> None:
        async with self._sessions() as session:
            rows = (await session.execute(select(PreferenceRow))).scalars().all()
        self._snapshot = {row.scope: _prefs(row) for row in rows}
        self._loaded_at = time.monotonic()

    async def get(self, scope: str) -> Preferences:
        if time.monotonic() - self._loaded_at >= self._ttl:
            async with self._lock:
                if time.monotonic() - self._loaded_at >= self._ttl:
                    await self._reload()
        return self._snapshot.get(scope, Preferences())

    async def set(self, scope: str, subject_id: int, *, lang: Lang | Literal["keep"] | None = "keep",
                  answer_length: AnswerLength | Literal["keep"] | None = "keep") -> Preferences:
        for attempt in range(2):  # a concurrent first write may win the insert; then update its row
            try:
                async with self._sessions() as session, session.begin():
                    row = (await session.execute(
                        select(PreferenceRow).where(PreferenceRow.scope == scope))).scalar_one_or_none()
                    if row is None:
                        row = PreferenceRow(scope=scope, subject_id=subject_id)
                        session.add(row)
                    if lang != "keep":
                        row.lang = lang
                    if answer_length != "keep":
                        row.answer_length = answer_length
                    prefs = _prefs(row)
                break
            except IntegrityError:
                if attempt:
                    raise
        self._snapshot[scope] = prefs
        return prefs

    async def resolve(self, *, user_id: int | None, chat_id: int | None, is_private: bool,
                      language_code: str | None) -> Resolved:
        """Group setting first (in groups), then the user's own choice, then Telegram's language."""
        lang: Lang | None = None
        length: AnswerLength | None = None
        if not is_private and chat_id is not None:
            chat_prefs = await self.get(scope_for("chat", chat_id))
            lang, length = chat_prefs.lang, chat_prefs.answer_length
        if (lang is None or length is None) and user_id is not None:
            user_prefs = await self.get(scope_for("user", user_id))
            lang = lang or user_prefs.lang
            length = length or user_prefs.answer_length
        return Resolved(lang=lang or pick_lang(language_code), answer_length=length or "normal",
                        lang_explicit=lang is not None)
