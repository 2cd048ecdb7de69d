"""The handlers' grouped dependencies: built once by :func:`bot.factory.create_dispatcher` and injected by
aiogram by name (``answering``, ``output``), so that a handler takes a few typed objects, not a dozen
keyword arguments. Per update, :class:`bot.middlewares.context.PreferencesMiddleware` injects ``reader``
(:class:`bot.preferences.Resolved`: the language and answer length for this reader).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.gaps.log import FeedbackStore
from app.pipeline import ReplyPipeline
from bot.delivery.answer_jobs import AnswerJobs
from bot.delivery.generations import Generations
from bot.output.notices import Notices
from bot.output.rich import RichReplies
from bot.output.streaming import ChatPacer
from gpu.data import GpuData
from rag.answering.answerer import Answerer
from rag.retrieval.retriever import HybridRetriever


@dataclass(frozen=True)
class Answering:
    """What answering a message uses: the reply pipeline, the glossary answerer and what records answers."""

    pipeline: ReplyPipeline
    gpu_data: GpuData
    answerer: Answerer | None  # None: questions are answered "unavailable", the rest still works
    retriever: HybridRetriever | None = None
    feedback: FeedbackStore | None = None  # None: answers go without vote buttons
    answer_jobs: AnswerJobs | None = None  # None: an answer is not recovered if this replica dies


@dataclass(frozen=True)
class Output:
    """How replies go out: preview pacing per chat, stoppable generations, notices, rich tables."""

    pacer: ChatPacer
    generations: Generations | None = None
    notices: Notices | None = None
    rich: RichReplies | None = None
