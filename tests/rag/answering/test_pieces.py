"""The answerer's pieces, each alone: the conversation memory, the quoted answer, the context order and the
outcome of one attempt (the orchestrator's tests are tests/rag/answering/test_answer.py)."""

from __future__ import annotations

import asyncio

from app.views.answer import answer_text
from infra.i18n import Phrase, t
from rag.answering.attempts import Attempt, outcome
from rag.answering.context_entries import named_first
from rag.answering.events import NO_MODEL, Answer, AnswerStatus
from rag.answering.extractive import Quote
from rag.answering.generation import GenerationResult
from rag.answering.memory import ConversationMemory, last_user_turn
from rag.answering.prompt import Turn
from rag.answering.quoting import VERBATIM, answering, quoted_answer
from rag.glossary import GlossaryEntry
from rag.verification.sentences import SentenceCheck, SentenceVerifier
from rag.verification.stream import SentenceStream


def entry(id_: str, term: str, definition: str, concept: str | None = None, category: str = "hardware",
          ) -> GlossaryEntry:
    return GlossaryEntry(id=id_, term=term, aliases=(), definition=definition, source="000_seed.txt",
                         category=category, concept=concept or id_)


HBM = entry("hbm", "HBM", "HBM — память с вертикально сложенными кристаллами.")
NVLINK = entry("nvlink", "NVLink", "NVLink — шина между GPU одного сервера.")


def test_last_user_turn_is_the_latest_question() -> None:
    history = [Turn("user", "что такое HBM?"), Turn("assistant", "…"), Turn("user", "а NVLink?"),
               Turn("assistant", "…")]
    assert last_user_turn(history) == "а NVLink?"
    assert last_user_turn([]) is None


class BrokenStore:
    async def append(self, key: str, question: str, answer: str) -> None:
        raise RuntimeError("down")

    async def history(self, key: str) -> list[Turn]:
        raise RuntimeError("down")

    async def aclose(self) -> None:
        pass


def test_memory_without_a_store_or_with_a_broken_one_reads_as_an_empty_conversation() -> None:
    async def scenario() -> None:
        for memory in (ConversationMemory(None), ConversationMemory(BrokenStore())):  # type: ignore[arg-type]
            await memory.remember("c:1", "что такое HBM?", "память")  # never raises
            assert await memory.history("c:1") == []
            assert await memory.previous_questions("c:1") == []
        assert await ConversationMemory(None).previous_questions(None) == []

    asyncio.run(scenario())


def test_a_quoted_answer_is_data_its_text_numbers_the_quotes_like_the_sources() -> None:
    quotes = [Quote(NVLINK, NVLINK.definition), Quote(HBM, HBM.definition)]
    answer = quoted_answer(quotes, "ru", "fallback", [Phrase.of("answer_timeout")], grounded=False,
                           renderings={}, model_name="qwen", notice=Phrase.of("answer_timeout"))
    assert answer.generated == "" and answer.header == (Phrase.of("answer_timeout"),)  # phrases, not prose
    assert answer_text(answer).splitlines() == [t("answer_timeout", "ru"), f"NVLink — «{NVLINK.definition}» [1]",
                                                f"HBM — «{HBM.definition}» [2]"]
    assert answer.said.splitlines() == answer_text(answer).splitlines()[1:]  # the memory keeps no notice


def test_the_fallback_quotes_are_the_context_entries_own_words() -> None:
    quotes = answering([HBM, NVLINK], "какая погода?")
    assert quotes and all(quote.text in quote.entry.definition for quote in quotes)
    assert {quote.entry for quote in quotes} <= {HBM, NVLINK}


def test_a_quoted_answer_cites_its_entries_and_names_no_model_when_none_wrote() -> None:
    answer = quoted_answer([Quote(HBM, HBM.definition)], "ru", "extractive", [VERBATIM],
                           grounded=True, renderings={}, model_name="qwen")
    assert answer.sources == [HBM] and answer.model == NO_MODEL and answer.grounded
    assert answer_text(answer).startswith(t("answer_verbatim", "ru"))


def test_a_named_latin_concept_comes_first_in_the_context() -> None:
    fp16 = entry("fp16", "FP16", "FP16 требует loss scaling.")
    bf16 = entry("bf16", "BF16", "BF16 — формат с диапазоном FP32.")
    assert named_first([fp16, bf16], "нужен ли loss scaling для BF16?", [fp16, bf16], top_k=4)[0] == bf16
    assert named_first([fp16, bf16], "нужен ли loss scaling?", [fp16, bf16], top_k=4) == [fp16, bf16]


def test_an_attempt_with_nothing_verified_falls_back_with_the_no_citations_notice() -> None:
    stream = SentenceStream(SentenceVerifier([HBM], "что такое HBM?", "ru"))
    seen: list[tuple[AnswerStatus, Phrase]] = []

    def fallback(status: AnswerStatus, notice: Phrase, result: GenerationResult,
                 rejected: tuple[SentenceCheck, ...]) -> Answer:
        seen.append((status, notice))
        return Answer(generated="", notice=notice, grounded=False, sources=[], model=NO_MODEL, ttft_s=0.0, tokens=0,
                      status=status, lang="ru")

    outcome(Attempt(GenerationResult(tokens=3), stream), [HBM], "ru", "qwen", fallback)
    outcome(Attempt(GenerationResult(failure="timeout"), stream), [HBM], "ru", "qwen", fallback)
    assert seen == [("fallback", Phrase.of("answer_no_citations")), ("timeout", Phrase.of("answer_timeout"))]
    stopped = outcome(Attempt(GenerationResult(failure="cancelled"), stream), [HBM], "ru", "qwen", fallback)
    assert stopped.status == "cancelled" and stopped.notice == Phrase.of("answer_cancelled")
    assert answer_text(stopped) == t("answer_cancelled", "ru")  # nothing was shown: the notice says why
