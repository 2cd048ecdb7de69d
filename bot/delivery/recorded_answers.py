"""An answer as sent, in the feedback store: the id its vote buttons carry (the ask router and the sweeper)."""

from __future__ import annotations

import logging

from app.gaps.log import FeedbackStore, nearest_entries, recorded_answer
from rag.answering.events import Answer
from rag.retrieval.retriever import HybridRetriever

log = logging.getLogger(__name__)


async def record_answer(feedback: FeedbackStore | None, retriever: HybridRetriever | None, question: str,
                  answer: Answer) -> str | None:
    """The sent answer (and its gaps) in the feedback store; its id goes into the vote buttons.

    Never in the way of the answer: a store that fails means an answer without buttons.
    """
    if feedback is None or answer.status == "cancelled":
        return None
    try:
        nearest = await nearest_entries(retriever, question) if retriever is not None else ()
        return await feedback.record_answer(recorded_answer(question, answer, nearest))
    except Exception:
        log.exception("could not record the answer for feedback")
        return None
