"""The context of an answer: the entries retrieval found for the question, chosen and ordered.

:func:`rag.context.choose_context` decides which hits make the context (or that the question is out of
scope); here the search runs (off the event loop), a follow-up is searched together with the question it
follows, and the concepts a question names by their Latin term are put first (:func:`named_first`).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Sequence
from dataclasses import replace

from rag.answering.memory import last_user_turn
from rag.answering.prompt import Turn
from rag.context import Retriever, choose_context, is_definition_question, looks_like_follow_up
from rag.glossary import GlossaryEntry
from rag.retrieval.retriever import SearchResult
from rag.subject import definition_subject
from rag.text import without_error_names
from rag.verification.mentions import concept_names

MAX_NAMED_CONCEPTS = 2  # the question's own terms put first in the context ("X vs Y" names two)...
ENTRIES_PER_NAMED_CONCEPT = 2  # ...with at most this many entries each, so the prompt stays top_k long


async def search(retriever: Retriever, query: str, top_k: int) -> SearchResult:
    result: SearchResult = await asyncio.to_thread(retriever.search, query, top_k)
    return result


async def context_entries(retriever: Retriever, glossary: Callable[[], list[GlossaryEntry]], question: str,
                          history: Sequence[Turn], *, top_k: int, topical: bool = False,
                          ) -> list[GlossaryEntry] | None:
    """The context entries, or None when the question is out of scope (see :func:`choose_context`).
    ``glossary``: every entry, read when needed (the served snapshot: a reload replaces it)."""
    alone = await search(retriever, question, top_k)
    if topical and not alone.in_scope and alone.evidence is not None and alone.evidence.names > 0:
        alone = replace(alone, in_scope=True)  # a glossary headword, in a message routed as a concept question
    last_user = last_user_turn(history)
    combined = None
    if last_user and looks_like_follow_up(question):
        combined = await search(retriever, f"{question} {last_user}", top_k)
    entries = choose_context([alone], question, follow_up_of=combined, top_k=top_k)
    if entries is None or combined is not None:
        return entries  # a follow-up's terms are the turn's
    if is_definition_question(question) and definition_subject(question) is not None:
        return entries  # a definition's concept is retrieval's call (rag.subject puts the one it names first)
    # a definition whose subject is no plain noun phrase ("what's the L40S actually built for?") is about the
    # concept it names by a Latin term, as any other question is
    return named_first(glossary(), question, entries, top_k)


# a GPU model's name: a letter or three and two to four digits (H100, A100, L40S, RTX 4090, MI300X), not FP16 or
# BF16, which are formats (their entries are not hardware)
_GPU_MODEL = re.compile(r"^(nvidia\s+|amd\s+)?(geforce\s+|instinct\s+)?(rtx\s+)?[a-z]{0,3}\s?\d{2,4}[a-z]{0,2}$", re.I)


_CLAUSE = re.compile(r"[,;:.!?]\s|\s[—–-]\s")


def is_gpu_entry(entry: GlossaryEntry) -> bool:
    """The entry defines one GPU model (the hardware a question names as where it happens)."""
    return entry.category == "hardware" and any(_GPU_MODEL.match(name) for name in entry.names)


def named_first(glossary: Sequence[GlossaryEntry], question: str, entries: list[GlossaryEntry],
                top_k: int) -> list[GlossaryEntry]:
    """The concepts the question names by a Latin term come first in the context, found if retrieval
    missed them: «нужен ли loss scaling для BF16?» ranks FP16's entry (it says "loss scaling") above
    BF16's, and the answer, or the glossary's words when no sentence passes, must be about BF16. Not for
    definitions (retrieval picks the concept asked) or follow-ups (the turn before names the subject)."""
    if not glossary or entries[0].category == "comparisons":
        return entries  # an entry comparing the named concepts («LoRA и DreamBooth») answers for both
    question = without_error_names(question)
    named = concept_names(tuple(glossary)).in_order(question, latin_only=True)
    if not named:
        return entries
    # a GPU named beside another concept is where it happens, not what is asked («учим на a100 в fp16, лезут
    # nan — что даст bf16?»: BF16 first); named alone, it is the subject
    # and what the question's last clause names is what it asks («…в fp16, лезут nan — что даст bf16?»: BF16)
    gpus = {e.concept for e in glossary if is_gpu_entry(e)}
    clauses = [clause for clause in _CLAUSE.split(question) if clause.strip()]
    asked = set(concept_names(tuple(glossary)).in_order(clauses[-1], latin_only=True)) if len(clauses) > 1 else set()
    named = sorted(named, key=lambda concept: (concept in gpus, concept not in asked))[:MAX_NAMED_CONCEPTS]
    first: list[GlossaryEntry] = []
    for concept in named:
        own = [e for e in glossary if e.concept == concept and e.category != "comparisons"]
        own.sort(key=lambda e: e not in entries)  # the entries retrieval picked first
        first += own[:ENTRIES_PER_NAMED_CONCEPT]
    promoted = {e.id for e in first}
    return (first + [e for e in entries if e.id not in promoted])[:max(top_k, len(first))]
