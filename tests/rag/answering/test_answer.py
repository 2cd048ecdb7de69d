"""Grounded answering end to end on the real small model and a real (lexical) retriever."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncGenerator, AsyncIterator
from pathlib import Path

import pytest

from app.views.answer import answer_json, answer_text
from infra.settings import DataSettings, LLMSettings, Settings
from models import build_backend
from models.base import ChatMessage, GenerationParams, StreamChunk
from models.llama_backend import LlamaCppBackend
from models.queue import RequestQueue
from rag.answering.answerer import Answerer
from rag.answering.build import build_answerer
from rag.answering.events import Answer, AnswerEvent, Delta, Done, Queued
from rag.answering.prompt import Turn
from rag.glossary import GlossaryEntry
from rag.retrieval.retriever import HybridRetriever
from tests.conftest import SMALL_MODEL


def entry(id_: str, term: str, definition: str, *aliases: str) -> GlossaryEntry:
    return GlossaryEntry(id=id_, term=term, aliases=aliases, definition=definition, source=f"{id_}.txt",
                         category="test", concept=id_)


ENTRIES = [
    entry("h100", "NVIDIA H100", "Datacenter GPU by NVIDIA on the Hopper architecture with 80 GB of HBM3 "
          "memory.", "H100"),
    entry("pa", "PagedAttention", "A vLLM algorithm that stores the KV cache in non-contiguous memory blocks "
          "to reduce fragmentation."),
    entry("nvlink", "NVLink", "NVIDIA's high-speed GPU-to-GPU interconnect with up to 900 GB/s of bandwidth."),
]


class CountingBackend(LlamaCppBackend):
    """The real small model, counting how often it is asked to generate."""

    calls = 0

    def stream(self, messages: list[ChatMessage], params: GenerationParams,
               cancel: asyncio.Event | None = None) -> AsyncGenerator[StreamChunk, None]:
        self.calls += 1
        return super().stream(messages, params, cancel)


@pytest.fixture(scope="module")
async def backend() -> AsyncIterator[CountingBackend]:
    llm = CountingBackend(SMALL_MODEL, n_ctx=2048, threads=2)
    await llm.load()
    yield llm
    await llm.aclose()


@pytest.fixture(scope="module")
def retriever() -> HybridRetriever:
    return HybridRetriever(ENTRIES, None, None)  # names + BM25; the dense part is another test's business


def make_answerer(retriever: HybridRetriever, backend: LlamaCppBackend | None, **kwargs: object) -> Answerer:
    # a generous timeout: on a loaded CI box a timeout would turn the answer into a fallback
    options: dict[str, object] = {"max_tokens": 24, "temperature": 0.0, "timeout_s": 400.0}
    options.update(kwargs)
    return Answerer(retriever, backend, **options)  # type: ignore[arg-type]


async def collect(answerer: Answerer, question: str, key: str | None = "chat:1") -> list[AnswerEvent]:
    async with contextlib.aclosing(answerer.answer(question, key)) as events:
        return [event async for event in events]


def final(events: list[AnswerEvent]) -> Answer:
    done = [e for e in events if isinstance(e, Done)]
    assert len(done) == 1 and events[-1] is done[0], "exactly one Done, and it comes last"
    return done[0].answer


def assert_citations_within(answer: Answer, context: int) -> None:
    for number in re.findall(r"\[(\d+)\]", answer_text(answer)):
        assert 1 <= int(number) <= max(context, len(answer.sources))


async def test_out_of_scope_is_refused_without_touching_the_model(
        retriever: HybridRetriever, backend: CountingBackend) -> None:
    before = backend.calls
    answer = final(await collect(make_answerer(retriever, backend), "какая погода в Москве завтра?"))
    assert answer.status == "out_of_scope" and not answer.grounded
    assert answer.sources == [] and answer.tokens == 0
    assert "глоссари" in answer_text(answer)  # refused in the question's language
    assert backend.calls == before


@pytest.mark.long
async def test_in_scope_answer_streams_and_is_grounded_or_falls_back(
        retriever: HybridRetriever, backend: CountingBackend) -> None:
    events = await collect(make_answerer(retriever, backend), "How does PagedAttention reduce memory fragmentation?")
    answer = final(events)
    deltas = [e for e in events if isinstance(e, Delta)]
    assert answer.tokens > 0 and answer.ttft_s > 0
    assert answer.model == SMALL_MODEL.name
    assert_citations_within(answer, len(ENTRIES))
    if answer.status == "answered":  # a sentence of the entry's own words: shown as it was generated
        assert deltas, "the answer streams as it is generated"
        assert answer.grounded and answer.sources
        assert {s.id for s in answer.sources} <= {e.id for e in ENTRIES}
    else:  # the 135M model restated no entry sentence (rag.verification.alignment): the definitions verbatim,
        # not grounded
        assert answer.status == "fallback" and not answer.grounded
        assert ENTRIES[1].definition in answer_text(answer)
    assert answer_json(answer).keys() == {"answer", "grounded", "sources", "model", "ttft_s", "tokens", "caveats"}
    assert answer_json(answer)["sources"][0].keys() == {"id", "term", "definition", "source"}


@pytest.mark.parametrize("problem", ["missing", "corrupt"])
async def test_bad_model_file_gives_retrieval_only_answers(
        retriever: HybridRetriever, tmp_path: Path, problem: str) -> None:
    path = tmp_path / "model.gguf"
    if problem == "corrupt":
        path.write_bytes(b"GGUF" + b"\x00" * 4096)  # right magic, garbage after it
    settings = Settings(llm=LLMSettings(model_path=path, answer_mode="generate"), data=DataSettings(state_dir=tmp_path))
    answerer = await build_answerer(settings, retriever, None, build_backend(settings.llm))
    assert answerer.backend is None and answerer.unavailable_reason
    answer = final(await collect(answerer, "как NVLink соединяет GPU?"))
    assert answer.status == "unavailable" and not answer.grounded
    assert "недоступна" in answer_text(answer) and ENTRIES[2].definition in answer_text(answer)
    assert answer.sources[0].id == "nvlink" and answer.model == "none"
    await answerer.aclose()


async def test_in_quote_mode_a_model_that_did_not_load_changes_no_answer(
        retriever: HybridRetriever, backend: CountingBackend, tmp_path: Path) -> None:
    """The default mode writes nothing with the model, so a missing model file is no reason for a "model
    unavailable" notice: the answer is the one a loaded model gives."""
    settings = Settings(llm=LLMSettings(model_path=tmp_path / "absent.gguf"), data=DataSettings(state_dir=tmp_path))
    assert settings.llm.answer_mode == "quote"
    without = await build_answerer(settings, retriever, None, build_backend(settings.llm))
    assert without.backend is None
    for question in ("как NVLink соединяет GPU?", "How does NVLink connect GPUs?"):
        answer = final(await collect(without, question))
        loaded = final(await collect(make_answerer(retriever, backend, generate=False,
                                                   renderings=without.renderings), question))
        assert answer.status == loaded.status == "extractive" and answer.grounded and answer.notice is None
        assert answer_text(answer) == answer_text(loaded) and "unavailable" not in answer_text(answer)
        assert "недоступна" not in answer_text(answer)
    await without.aclose()


async def test_quote_mode_answers_with_the_glossarys_sentences_and_asks_the_model_nothing(
        retriever: HybridRetriever, backend: CountingBackend) -> None:
    """LLM_ANSWER_MODE=quote (the default): a loaded model writes nothing; the answer is the entries' words."""
    answerer = make_answerer(retriever, backend, generate=False)
    before = backend.calls
    events = await collect(answerer, "как NVLink соединяет GPU?")
    answer = final(events)
    assert backend.calls == before and not [e for e in events if isinstance(e, Delta)]
    assert answer.status == "extractive" and answer.grounded and answer.model == "none"
    assert answer.sources[0].id == "nvlink" and ENTRIES[2].definition in answer_text(answer)
    assert Settings().llm.answer_mode == "quote"


async def test_full_queue_answers_busy_at_once(retriever: HybridRetriever, backend: CountingBackend) -> None:
    queue = RequestQueue(max_waiting=1, parallel=1, initial_service_s=12.0)
    answerer = make_answerer(retriever, backend, queue=queue)
    holder = queue.enqueue("someone")  # a request generating
    queue.enqueue("another")  # and one waiting: the queue is full
    before = backend.calls
    answer = final(await collect(answerer, "How does NVLink connect GPUs?"))
    assert answer.status == "busy" and answer.retry_after_s == 12
    assert "try again in 12 s" in answer_text(answer) and ENTRIES[2].definition in answer_text(answer)
    assert backend.calls == before
    holder.release()


async def test_queue_position_then_cancel_stops_the_answer(
        retriever: HybridRetriever, backend: CountingBackend) -> None:
    answerer = make_answerer(retriever, backend, max_tokens=200)
    blocker = answerer.queue.enqueue("other-user")
    events: list[AnswerEvent] = []

    async def consume() -> None:
        async with contextlib.aclosing(answerer.answer("How does NVLink connect GPUs?", "chat:9",
                                                       user_key="u9")) as stream:
            async for event in stream:
                events.append(event)

    task = asyncio.create_task(consume())
    await asyncio.sleep(0.3)
    assert events and isinstance(events[0], Queued) and events[0].position == 1
    calls = backend.calls
    blocker.release()
    for _ in range(200):  # the model has started on it (nothing may be shown yet: sentences wait for checks)
        if backend.calls > calls:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.1)
    assert answerer.cancel("u9") == 1  # /stop from that user
    await asyncio.wait_for(task, 60)
    answer = final(events)
    assert answer.status == "cancelled" and not answer.grounded
    assert answer.tokens < 20


async def test_timeout_falls_back_to_definitions(retriever: HybridRetriever, backend: CountingBackend) -> None:
    answerer = make_answerer(retriever, backend, timeout_s=0.05, max_tokens=200)
    answer = final(await collect(answerer, "How does NVLink connect GPUs?"))
    assert answer.status == "timeout" and not answer.grounded
    assert ENTRIES[2].definition in answer_text(answer)
    assert answerer.queue.running == 0  # the slot was given back


async def test_follow_up_retrieves_with_the_previous_question(retriever: HybridRetriever) -> None:
    answerer = make_answerer(retriever, None)
    history = [Turn("user", "что такое H100?"), Turn("assistant", "Это GPU NVIDIA [1].")]
    assert await answerer.retrieve("а сколько у неё памяти?", []) is None  # alone it is out of scope
    entries = await answerer.retrieve("а сколько у неё памяти?", history)
    assert entries is not None and entries[0].id == "h100"
    # an unrelated question after it is not dragged into scope by the history
    assert await answerer.retrieve("какая погода в Москве?", history) is None


async def test_answer_budget_can_be_lowered_per_request(
        retriever: HybridRetriever, backend: CountingBackend) -> None:
    answerer = make_answerer(retriever, backend, max_tokens=200)
    events = [e async for e in answerer.answer("How does NVLink connect GPUs?", None, max_tokens=3)]
    answer = final(events)
    assert 1 <= answer.tokens <= 3


async def test_console_chat_streams_the_answer_then_the_sources(
        retriever: HybridRetriever, backend: CountingBackend) -> None:
    import io

    from anchorgpu.console import ConsoleChat
    from app.services import Services

    services = Services.create(Settings())
    services.answerer = make_answerer(retriever, backend)
    out = io.StringIO()
    chat = ConsoleChat(services, lang="en", out=out)
    await chat.handle("How does NVLink connect GPUs?")
    printed = out.getvalue()
    assert "Sources:" in printed and "NVLink — AnchorGPU glossary (nvlink)" in printed
    await chat.handle("/ask")
    assert "Usage: /ask QUESTION" in out.getvalue()


async def test_follow_up_uses_the_stored_conversation_of_that_thread(
        retriever: HybridRetriever, tmp_path: Path) -> None:
    from infra.db import create_engine
    from infra.migrate import migrate
    from rag.answering.conversation import SQLConversationStore

    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'c.db'}")
    store = SQLConversationStore(engine, max_tokens=500)
    await migrate(engine)
    answerer = Answerer(retriever, None, conversations=store)  # retrieval-only keeps this test model-free
    first = final(await collect(answerer, "что такое H100?", key="-100:7"))
    assert first.sources[0].id == "h100"
    follow_up = final(await collect(answerer, "а сколько у неё памяти?", key="-100:7"))
    assert follow_up.status == "unavailable" and follow_up.sources[0].id == "h100"
    # another thread of the same group has no such history: the bare follow-up is out of scope there
    other = final(await collect(answerer, "а сколько у неё памяти?", key="-100:8"))
    assert other.status == "out_of_scope"
    await engine.dispose()


def test_focus_keeps_one_concept_only_when_retrieval_is_sure() -> None:
    from rag.context import FOCUS_MARGIN, focus
    from rag.retrieval.retriever import Hit

    kv_a, kv_b = entry("kv-a", "KV cache", "a"), entry("kv-b", "KV-кэш", "b")
    kv_b = GlossaryEntry(**{**kv_b.__dict__, "concept": "kv-a"})  # another seed file's entry, same concept
    other = entry("pa", "PagedAttention", "c")
    sure = [Hit(kv_a, 1.0), Hit(kv_b, 0.9), Hit(other, FOCUS_MARGIN - 0.01)]
    assert [h.entry.id for h in focus(sure)] == ["kv-a", "kv-b"], "same concept kept, distractor dropped"
    unsure = [Hit(kv_a, 1.0), Hit(other, FOCUS_MARGIN + 0.01)]
    assert focus(unsure) == unsure
    assert focus([]) == []


async def test_a_sure_question_gets_only_its_concept_in_the_context() -> None:
    from infra.settings import get_settings
    from rag.context import FOCUS_MARGIN
    from rag.retrieval.retriever import build_retriever

    real = await asyncio.to_thread(build_retriever, get_settings())
    answerer = make_answerer(real, None)
    sure = await answerer.retrieve("что такое скорость обучения", [])
    assert sure is not None and {e.concept for e in sure} == {"learning-rate"}
    # tensor and pipeline parallelism are close concepts: the context keeps both (with the English-only
    # MiniLM, "шина между видеокартами на 900 ГБ/с" was unsure too; multilingual e5 is sure it is NVLink)
    unsure = await answerer.retrieve("как разрезать слой модели между несколькими видеокартами", [])
    assert unsure is not None and len({e.concept for e in unsure}) > 1
    assert unsure[0].concept == "tensor-parallelism"
    # fused scores flat (BM25's ranks alone), but BM25's own scores put inpainting far ahead
    result = real.search("как дорисовать часть картинки по маске", 4)
    assert result.lexical_runner_up is not None and result.lexical_runner_up < FOCUS_MARGIN
    lexically_sure = await answerer.retrieve("как дорисовать часть картинки по маске", [])
    assert lexically_sure is not None and {e.concept for e in lexically_sure} == {"inpainting"}


class ScriptedBackend:
    """Replies with fixed texts in turn and records the prompts: the retry logic is under test, not a model."""

    model_name = "scripted"
    parallel = 1
    caches_prompts = False

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.prompts: list[str] = []

    async def load(self) -> None:
        return None

    async def stream(self, messages: list[ChatMessage], params: GenerationParams,
                     cancel: asyncio.Event | None = None) -> AsyncGenerator[StreamChunk, None]:
        from models.base import Finished, TextDelta

        self.prompts.append(messages[-1].content)
        reply = self.replies.pop(0)
        yield TextDelta(reply)
        yield Finished(prompt_tokens=10, completion_tokens=len(reply.split()), finish_reason="stop")

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    async def aclose(self) -> None:
        return None


def _two_concepts() -> HybridRetriever:
    return HybridRetriever([
        entry("nvlink", "NVLink", "NVIDIA's high-speed GPU-to-GPU interconnect with up to 900 GB/s of bandwidth."),
        entry("pcie", "PCIe", "The bus that connects a GPU to the server; it limits multi-GPU communication."),
    ], None, None)


async def test_an_ungrounded_answer_is_retried_with_the_best_concept_only() -> None:
    replies = ("Bananas are yellow and grow on trees.", "NVLink is NVIDIA's high-speed GPU-to-GPU interconnect [1].")
    backend = ScriptedBackend(*replies)
    answerer = Answerer(_two_concepts(), backend, max_tokens=24, timeout_s=60)  # type: ignore[arg-type]
    events = await collect(answerer, "multi-GPU interconnect bandwidth", key=None)
    answer = final(events)
    assert answer.status == "answered" and answer.grounded
    assert [s.id for s in answer.sources] == ["nvlink"]
    assert "PCIe" in backend.prompts[0] and "PCIe" not in backend.prompts[1], "the retry saw one concept"
    streamed = "".join(e.text for e in events if isinstance(e, Delta))
    assert "Bananas" not in streamed and "Bananas" not in answer_text(answer), "unverified text is never shown"
    assert "interconnect" in streamed, "the retry's verified sentence streams like the first attempt's"
    assert answer.tokens == sum(len(reply.split()) for reply in replies), "both tries are counted"
    assert 0 < answer.first_token_s <= answer.ttft_s, "shown after the first try's first token, not before"


class WordByWordBackend(ScriptedBackend):
    """Streams each reply a word at a time, as a model does, and records how many words it wrote before it was
    stopped: the answerer's early stop is under test."""

    def __init__(self, *replies: str) -> None:
        super().__init__(*replies)
        self.written: list[int] = []

    async def stream(self, messages: list[ChatMessage], params: GenerationParams,
                     cancel: asyncio.Event | None = None) -> AsyncGenerator[StreamChunk, None]:
        from models.base import Finished, TextDelta

        self.prompts.append(messages[-1].content)
        words = self.replies.pop(0).split(" ")
        self.written.append(0)
        for n, word in enumerate(words):
            if cancel is not None and cancel.is_set():
                yield Finished(prompt_tokens=10, completion_tokens=n, finish_reason="cancelled")
                return
            self.written[-1] += 1
            yield TextDelta(word if n == 0 else f" {word}")
            await asyncio.sleep(0)
        yield Finished(prompt_tokens=10, completion_tokens=len(words), finish_reason="stop")


async def test_a_generation_whose_first_claim_fails_is_stopped_and_retried_at_once() -> None:
    unsupported = "Bananas are yellow and grow on trees. " + "They are sold in bunches at every market. " * 20
    backend = WordByWordBackend(unsupported, "NVLink is NVIDIA's high-speed GPU-to-GPU interconnect [1].")
    answerer = Answerer(_two_concepts(), backend, max_tokens=400, timeout_s=60)  # type: ignore[arg-type]
    events = await collect(answerer, "multi-GPU interconnect bandwidth", key=None)
    answer = final(events)
    assert answer.status == "answered" and "interconnect" in answer_text(answer)
    assert backend.written[0] < 12 < len(unsupported.split()), "stopped after its first sentence, not at its end"
    assert "Bananas" not in "".join(e.text for e in events if isinstance(e, Delta))


async def test_a_lead_in_to_a_list_is_no_failed_claim() -> None:
    # "Here is how:" states nothing; the sentence after it is what the model answers with
    backend = WordByWordBackend("Here is how:\nNVLink is NVIDIA's high-speed GPU-to-GPU interconnect [1].")
    answerer = Answerer(_two_concepts(), backend, max_tokens=400, timeout_s=60)  # type: ignore[arg-type]
    answer = final(await collect(answerer, "multi-GPU interconnect bandwidth", key=None))
    assert answer.status == "answered" and len(backend.prompts) == 1 and "interconnect" in answer_text(answer)


async def test_a_final_try_whose_first_claim_fails_falls_back_without_waiting_for_its_end() -> None:
    endless = "Apples are red and sweet. " * 40
    backend = WordByWordBackend("Bananas are yellow.", endless)
    answerer = Answerer(_two_concepts(), backend, max_tokens=400, timeout_s=60)  # type: ignore[arg-type]
    answer = final(await collect(answerer, "multi-GPU interconnect bandwidth", key=None))
    assert answer.status == "fallback" and "NVLink" in answer_text(answer)
    assert backend.written[1] < 10 < len(endless.split())


async def test_a_retry_that_is_still_ungrounded_falls_back_to_the_definitions() -> None:
    backend = ScriptedBackend("Bananas are yellow.", "Apples are red.")
    answerer = Answerer(_two_concepts(), backend, max_tokens=24, timeout_s=60)  # type: ignore[arg-type]
    answer = final(await collect(answerer, "multi-GPU interconnect bandwidth", key=None))
    assert answer.status == "fallback" and not answer.grounded and len(backend.prompts) == 2
    assert "NVLink" in answer_text(answer) and "900 GB/s" in answer_text(answer)


async def test_a_russian_question_is_answered_and_retried_under_russian_rules() -> None:
    from rag.answering.prompt import SYSTEM_RULES, SYSTEM_RULES_RU

    nvlink = entry("nvlink", "NVLink", "Высокоскоростная шина NVIDIA между GPU с пропускной способностью до 900 ГБ/с.",
                   "нвлинк")
    backend = ScriptedBackend("NVLink is a fast bus between GPUs.",  # English: no Russian entry supports it
                              "NVLink — высокоскоростная шина NVIDIA между GPU [1].")
    seen: list[str] = []
    original = backend.stream

    def recording(messages: list[ChatMessage], params: GenerationParams,
                  cancel: asyncio.Event | None = None) -> AsyncGenerator[StreamChunk, None]:
        seen.append(messages[0].content)
        return original(messages, params, cancel)

    backend.stream = recording  # type: ignore[method-assign]
    answerer = Answerer(HybridRetriever([nvlink], None, None), backend, max_tokens=24,  # type: ignore[arg-type]
                        timeout_s=60)
    answer = final(await collect(answerer, "как NVLink соединяет GPU?", key=None))
    assert answer.status == "answered" and answer.lang == "ru" and "шина" in answer_text(answer)
    assert seen == [SYSTEM_RULES_RU, SYSTEM_RULES_RU]
    backend.replies = ["NVLink is NVIDIA's high-speed bus between GPUs with up to 900 GB/s [1]."]
    await collect(answerer, "how does NVLink connect GPUs?", key=None)
    assert seen[2] == SYSTEM_RULES, "an English question keeps the English rules"


async def test_a_question_that_names_one_concept_gets_only_that_concept() -> None:
    from infra.settings import get_settings
    from rag.retrieval.retriever import build_retriever

    real = await asyncio.to_thread(build_retriever, get_settings())
    answerer = make_answerer(real, None)
    # "fine tuning" is also a side of the "RAG и fine-tuning" comparison, which the model used to cite
    named = real.search("what is fine tuning", 4)
    assert named.names_first and {h.entry.concept for h in named.hits} != {"fine-tuning"}
    context = await answerer.retrieve("what is fine tuning", [])
    assert context is not None and {e.concept for e in context} == {"fine-tuning"}
    # a name inside a longer one is not a second concept
    assert real.search("what is paged attention", 4).names_first
    # both sides of a comparison name the comparison
    compared = await answerer.retrieve("чем GGUF отличается от GGML", [])
    assert compared is not None and {e.concept for e in compared} == {"ggml-vs-gguf"}
    # a name that is only a small part of the question does not decide
    assert not real.search("шина между видеокартами на 900 ГБ/с", 4).names_first
    assert not real.search("лора поверх четырёхбитной модели", 4).names_first


@pytest.mark.long
async def test_the_warm_up_evaluates_both_system_prompts_when_the_backend_caches_them(
        retriever: HybridRetriever) -> None:
    from rag.answering.prompt import build_messages

    cached = CountingBackend(SMALL_MODEL, n_ctx=2048, threads=2, prompt_cache_mb=64)
    plain = CountingBackend(SMALL_MODEL, n_ctx=2048, threads=2)
    for llm in (cached, plain):
        await llm.load()
    try:
        for llm in (cached, plain):
            await make_answerer(retriever, llm).warm_up()
        assert (cached.calls, plain.calls) == (2, 1), "the retry's Russian rules are worth warming only in a cache"
        states = cached.llama.cache.cache_state
        assert len(states) == 2, "one state per system prompt"
        # the default rules are evaluated last, so the first question's prompt extends what the model holds
        default = build_messages("?", [], [], "ru")[0].content
        for llm in (cached, plain):
            held = llm.llama.detokenize(llm.llama.input_ids[:llm.llama.n_tokens].tolist()).decode(errors="ignore")
            assert default[:200] in held, held[:300]
    finally:
        for llm in (cached, plain):
            await llm.aclose()


async def test_follow_ups_that_point_back_are_answered_with_the_glossarys_words(tmp_path: Path) -> None:
    """"а FSDP?" after "что такое DDP?" asks what FSDP is; "а чем она отличается от QLoRA?" after "что такое
    LoRA?" compares LoRA with QLoRA: both quoted, in the conversation's language, never generated."""
    from infra.db import create_engine
    from infra.migrate import migrate
    from rag.answering.conversation import SQLConversationStore
    from rag.glossary import load_glossary
    from tests.conftest import DATA_DIR

    engine = create_engine(f"sqlite+aiosqlite:///{tmp_path / 'c.db'}")
    store = SQLConversationStore(engine, max_tokens=500)
    await migrate(engine)
    answerer = Answerer(HybridRetriever(load_glossary(DATA_DIR), None, None), None, conversations=store)
    await collect(answerer, "что такое DDP?", key="chat")
    fsdp = final(await collect(answerer, "а FSDP?", key="chat"))
    assert fsdp.status == "extractive" and fsdp.lang == "ru", fsdp
    assert {source.concept for source in fsdp.sources} == {"fsdp"}
    await collect(answerer, "что такое LoRA?", key="other")
    compared = final(await collect(answerer, "а чем она отличается от QLoRA?", key="other"))
    assert compared.status == "extractive" and [s.concept for s in compared.sources][:2] == ["lora", "qlora"]
    await engine.dispose()


async def test_a_concept_the_question_names_comes_first_even_when_retrieval_ranks_a_neighbour_higher() -> None:
    """«нужен ли loss scaling для BF16?»: "loss scaling" is in FP16's entry, but the question is about BF16,
    so BF16's entry leads the context, and the glossary's words quoted without a model are BF16's."""
    from rag.glossary import load_glossary
    from tests.conftest import DATA_DIR

    answerer = Answerer(HybridRetriever(load_glossary(DATA_DIR), None, None), None)
    answer = final(await collect(answerer, "нужен ли loss scaling для BF16?", key=None))
    assert answer.status == "unavailable" and answer.sources[0].concept == "bf16", answer.sources
    assert "диапазоном FP32" in answer_text(answer)
    # a definition keeps retrieval's concept: "Инференс" in the question does not displace prefill
    assert (await answerer.retrieve("что такое prefill?", []) or [])[0].concept == "prefill"
