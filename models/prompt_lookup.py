"""Speculative decoding by prompt lookup for the in-process model.

A grounded answer copies the glossary's words: the next tokens the model writes have very often been written
already, in an entry of its context. The drafter finds the last few generated tokens earlier in the context
and proposes the tokens that followed them there; the model then evaluates its last token and the whole draft
in one batch and samples every position from its own logits. A draft token is kept only while it equals the
token the model sampled at that position, so the text has the distribution plain decoding gives (at
temperature 0, the same argmax) and a batch of drafted tokens costs little more than one decode step on a
bandwidth-bound machine.

llama-cpp-python's ``Llama.generate`` already runs this loop when ``Llama.draft_model`` is set, but asks the
context for logits of *every* token, the prompt's included, and copies them into an n_ctx × vocabulary
buffer (2.5 GB for Qwen2.5 at n_ctx 4096; the prompt's evaluation slower by about a third).
:func:`lookup_eval` replaces ``Llama.eval``: it asks for every token's logits only in a draft-sized batch and
copies none (the sampler reads them from the context, ``llama_get_logits_ith`` with negative indices).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

MAX_NGRAM = 3  # the longest run of last tokens looked up; shorter runs are tried when it is not found
MIN_NGRAM = 2  # one token alone ("the", ",") is found everywhere and predicts little


# Draft sizes tried, smallest first: on a CPU a batch costs about the same for 1-3 or 5-7 drafted tokens (the
# kernels work in fours), so a draft fills its batch; a rejected draft costs the batch, so a draft starts small
# and grows only while the model keeps all of it
DRAFT_SIZES = (3, 7, 11, 15)


@dataclass
class PromptLookupDraft:
    """A ``Llama.draft_model``: the tokens that followed the last ``n`` tokens where they occurred last before
    (``n`` from :data:`MAX_NGRAM` down to :data:`MIN_NGRAM`), else none. A draft is one of :data:`DRAFT_SIZES`
    up to ``max_tokens``: the next larger after a draft kept whole, the smallest after one the model rejected."""

    max_tokens: int = 15
    drafted: int = field(default=0, init=False)  # counters for benchmarks: tokens proposed, and kept
    accepted: int = field(default=0, init=False)
    prompt_tokens: int = field(default=0, init=False)  # of this generation, from its first call
    _size: int = field(default=0, init=False)
    _pending: tuple[int, int] = field(default=(0, 0), init=False)  # (length of ids when drafted, draft size)

    def __post_init__(self) -> None:
        self._sizes = (*(size for size in DRAFT_SIZES if size < self.max_tokens), self.max_tokens)
        self._size = self._sizes[0]

    def __call__(self, input_ids: npt.NDArray[np.intc], /, **_: Any) -> npt.NDArray[np.intc]:
        self._count_kept(len(input_ids))
        # the first call gets the prompt and the first token sampled; the context may hold drafted tokens
        # the model did not keep when the answer ends, so its length is no measure of the prompt
        self.prompt_tokens = self.prompt_tokens or len(input_ids) - 1
        draft = find_draft(input_ids, self._size)
        self._pending = (len(input_ids), len(draft))
        self.drafted += len(draft)
        return draft

    def _count_kept(self, length: int) -> None:
        # the loop calls back with the kept draft tokens and the one token sampled after them appended
        start, size = self._pending
        self._pending = (0, 0)
        if not size or length <= start:
            return
        kept = min(size, length - start - 1)
        self.accepted += kept
        if kept == size == self._size:
            self._size = next((s for s in self._sizes if s > size), self._size)
        elif kept < size:
            self._size = self._sizes[0]

    def begin(self) -> None:
        """A new generation: no draft pending, the smallest size first (the counters go on)."""
        self.prompt_tokens = 0
        self._pending = (0, 0)
        self._size = self._sizes[0]

    def reset_counts(self) -> None:
        self.drafted = self.accepted = 0
        self.begin()


def find_draft(ids: npt.NDArray[np.intc], max_tokens: int) -> npt.NDArray[np.intc]:
    """The tokens that followed the latest earlier occurrence of the last n tokens (longest n first)."""
    length = len(ids)
    for n in range(min(MAX_NGRAM, length - 1), MIN_NGRAM - 1, -1):
        # windows that end before the last token: each has at least one token after it
        windows = np.lib.stride_tricks.sliding_window_view(ids[: length - 1], n)
        hits = np.flatnonzero(np.all(windows == ids[length - n:], axis=1))
        if hits.size:
            start = int(hits[-1]) + n
            return np.asarray(ids[start: min(start + max_tokens, length)], dtype=np.intc)
    return np.empty(0, dtype=np.intc)


def enable_prompt_lookup(llm: Any, max_tokens: int) -> PromptLookupDraft:
    """Drafts of up to ``max_tokens`` for ``llm`` (a ``llama_cpp.Llama``): its draft model, and the eval that
    gives a draft's batch every position's logits. Setting ``llm.draft_model = None`` turns the drafts off again
    (the eval then evaluates as the library's does)."""
    drafter = PromptLookupDraft(max_tokens)
    llm.draft_model = drafter  # a LlamaDraftModel by what the loop calls (subclassing it imports llama_cpp)
    llm.eval = functools.partial(lookup_eval, llm, draft_batch=max_tokens + 1)
    return drafter


def lookup_eval(llm: Any, tokens: list[int] | npt.NDArray[np.intc], *, draft_batch: int) -> None:
    """``Llama.eval`` (llama-cpp-python 0.3.36) for prompt lookup: a batch of at most ``draft_batch`` tokens
    (the last sampled token and a draft) gets the logits of every token, a longer one (a prompt) its last
    token's only. No logits are copied: sampling reads the context's own."""
    llm._ctx.kv_cache_seq_rm(-1, llm.n_tokens, -1)
    tokens = list(tokens)
    every_position = len(tokens) <= draft_batch
    for i in range(0, len(tokens), llm.n_batch):
        batch = tokens[i: i + llm.n_batch]
        n_past = llm.n_tokens
        llm._batch.set_batch(batch=batch, n_past=n_past, logits_all=every_position)
        llm._ctx.decode(llm._batch)
        llm.input_ids[n_past: n_past + len(batch)] = batch
        llm.n_tokens += len(batch)
        llm._requires_eval = False
