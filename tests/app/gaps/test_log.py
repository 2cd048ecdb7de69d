"""The feedback store and the gap log on both engines (SQLite file, PostgreSQL schema), migrated like the app."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from app.gaps.log import AnswerVoteRow, FeedbackStore, Nearest, RecordedAnswer, hash_user
from infra.migrate import migrate

SALT = "test-salt"


@pytest.fixture
async def store(sql_engine: AsyncEngine) -> FeedbackStore:
    await migrate(sql_engine)
    return FeedbackStore(sql_engine, SALT, retention_days=30)


def answer(question: str, status: str = "answered", rejected: tuple[tuple[str, str], ...] = ()) -> RecordedAnswer:
    return RecordedAnswer(question=question, lang="ru", text="текст ответа", sources=("011-kv-cache",),
                          model="qwen", status=status, rejected=rejected,
                          nearest=(Nearest("011-kv-cache", 0.8), Nearest("012-paged-attention", 0.5)))


async def test_a_vote_is_one_per_user_per_answer_and_changeable(store: FeedbackStore) -> None:
    answer_id = await store.record_answer(answer("что такое KV-кэш?"))
    assert await store.vote(answer_id, 42, "up")
    assert await store.vote(answer_id, 42, "up")  # the same button again: still one vote
    assert await store.vote(answer_id, 43, "up")
    assert (await store.vote_counts()).up == 2
    assert await store.vote(answer_id, 42, "wrong")  # changed its mind
    counts = await store.vote_counts()
    assert (counts.up, counts.down, counts.wrong) == (1, 0, 1)
    assert await store.set_reason(answer_id, 42, "  путает   KV-кэш с весами\n")
    assert await store.vote_of(answer_id, 42) == ("wrong", "путает KV-кэш с весами")
    assert not await store.set_reason(answer_id, 43, "нет такого голоса «неверно»")
    assert not await store.vote("0" * 32, 42, "up")  # an unknown answer: refused, nothing stored


async def test_user_ids_are_stored_salted_and_hashed(store: FeedbackStore) -> None:
    answer_id = await store.record_answer(answer("что такое LoRA?"))
    await store.vote(answer_id, 123456789, "down")
    async with store.engine.connect() as conn:
        users = (await conn.execute(select(AnswerVoteRow.user_hash))).scalars().all()
    assert users == [hash_user(123456789, SALT)]
    assert "123456789" not in users[0] and hash_user(123456789, "other") != users[0]


async def test_refusals_fallbacks_rejections_and_downvotes_are_logged(store: FeedbackStore) -> None:
    await store.record_answer(answer("как испечь блины?", status="out_of_scope"))
    await store.record_answer(answer("что такое NVLink?", status="timeout"))
    await store.record_answer(answer("что такое FSDP?", rejected=(("swapped", "FSDP копирует веса."),
                                                                  ("number", "FSDP экономит 90%."))))
    voted = await store.record_answer(answer("что такое ZeRO?"))
    await store.vote(voted, 1, "down")
    await store.vote(voted, 1, "wrong")  # still a downvote: logged once, not twice
    await store.vote(voted, 2, "up")
    gaps = await store.gaps()
    assert sorted((g.kind, g.question, g.detail) for g in gaps) == [
        ("downvoted", "что такое ZeRO?", "down"),
        ("fallback", "что такое NVLink?", "timeout"),
        ("rejected", "что такое FSDP?", "number"),
        ("rejected", "что такое FSDP?", "swapped"),
        ("unanswered", "как испечь блины?", "out_of_scope"),
    ]
    assert gaps[0].nearest == (Nearest("011-kv-cache", 0.8), Nearest("012-paged-attention", 0.5))
    assert all(g.created_at.tzinfo is not None for g in gaps)
    today = await store.counts_since(datetime.now(UTC) - timedelta(hours=1))
    assert today == {"answers": 4, "up": 1, "down": 1, "downvoted": 1, "fallback": 1, "rejected": 2,
                     "unanswered": 1}


async def test_purge_deletes_what_is_older_than_the_retention(store: FeedbackStore) -> None:
    now = datetime.now(UTC)
    old = await store.record_answer(answer("старый вопрос", status="out_of_scope"), now=now - timedelta(days=31))
    await store.vote(old, 7, "down", now=now - timedelta(days=31))
    await store.record_gap("unanswered", "старый пробел", "ru", now=now - timedelta(days=40))
    fresh = await store.record_answer(answer("новый вопрос", status="out_of_scope"), now=now - timedelta(days=29))
    await store.vote(fresh, 7, "up", now=now - timedelta(days=29))
    assert await store.purge(now=now) == 4  # two old gaps (refusal, downvote), the old gap, the old answer
    assert [g.question for g in await store.gaps()] == ["новый вопрос"]
    assert await store.vote_of(old, 7) is None and await store.vote_of(fresh, 7) == ("up", None)
    assert len(await store.answers()) == 1


async def test_frequent_gaps_count_the_same_question_whatever_its_case(store: FeedbackStore) -> None:
    since = datetime.now(UTC) - timedelta(days=1)
    for text in ("Как испечь блины?", "как  испечь блины?", "кто выиграл чемпионат?"):
        await store.record_gap("unanswered", text, "ru")
    top = await store.frequent_gaps(since)
    assert top[0][0] == 2 and top[0][1] == "unanswered" and top[1] == (1, "unanswered", "кто выиграл чемпионат?")


def test_a_store_without_a_salt_is_refused(tmp_path: object) -> None:
    with pytest.raises(ValueError, match="salt"):
        FeedbackStore(None, "")  # type: ignore[arg-type]
