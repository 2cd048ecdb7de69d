"""Prompt-lookup decoding: the drafts it proposes, and on the real small model the same text as plain decoding."""

from __future__ import annotations

import numpy as np

from models.base import ChatMessage, Finished, GenerationParams, TextDelta
from models.llama_backend import LlamaCppBackend
from models.prompt_lookup import PromptLookupDraft, find_draft
from tests.conftest import SMALL_MODEL


def ids(*values: int) -> np.ndarray:
    return np.asarray(values, dtype=np.intc)


def test_the_tokens_after_the_latest_earlier_occurrence_of_the_tail_are_drafted() -> None:
    #          0  1  2  3  4  5  6  7  8  9 10
    context = ids(5, 6, 7, 8, 1, 5, 6, 9, 4, 5, 6)
    assert find_draft(context, 3).tolist() == [9, 4, 5], "the latest occurrence of (5, 6), not the first"
    assert find_draft(context, 1).tolist() == [9]


def test_a_longer_tail_wins_over_a_shorter_one() -> None:
    context = ids(1, 2, 3, 40, 0, 2, 3, 50, 0, 1, 2, 3)
    assert find_draft(context, 2).tolist() == [40, 0], "(1, 2, 3) occurred before (… 2, 3)"


def test_no_draft_without_a_repeated_pair_or_past_the_end() -> None:
    assert find_draft(ids(1, 2, 3, 4), 5).size == 0
    assert find_draft(ids(7, 1, 2, 8, 3, 2), 5).size == 0, "one token alone is not looked up"
    assert find_draft(ids(1, 2), 5).size == 0
    assert find_draft(ids(1, 2, 1, 2), 5).tolist() == [1, 2], "the draft stops at the text's end"


def test_the_drafter_counts_the_tokens_the_model_kept() -> None:
    drafter = PromptLookupDraft(max_tokens=3)
    context = [8, 9, 1, 2, 3, 4, 5, 8, 9]
    assert drafter(ids(*context)).tolist() == [1, 2, 3]
    # the model kept 1 and 2, then sampled 7 where the draft had 3
    drafter(ids(*context, 1, 2, 7))
    assert (drafter.drafted, drafter.accepted) == (3, 2)
    drafter.reset_counts()
    assert (drafter.drafted, drafter.accepted) == (0, 0)


def test_a_draft_grows_while_it_is_kept_whole_and_starts_small_again_after_a_miss() -> None:
    text = list(range(100, 140))
    context = [*text, 1, *text[:2]]  # the text again from its start: every draft is right
    drafter = PromptLookupDraft(max_tokens=15)
    sizes = []
    for _ in range(3):
        draft = drafter(ids(*context)).tolist()
        sizes.append(len(draft))
        context += [*draft, text[len(context) + len(draft) - 41]]  # all kept, and the model's next token
    assert sizes == [3, 7, 11]
    draft = drafter(ids(*context)).tolist()
    assert len(draft) == 15
    context += [draft[0], 999]  # the model kept one drafted token, then left the text
    assert drafter(ids(*context)).size == 0
    assert drafter.accepted == 3 + 7 + 11 + 1
    context += text[:2]
    assert len(drafter(ids(*context))) == 3, "after a miss the next draft is small again"
    drafter.begin()
    assert drafter._pending == (0, 0)


PASSAGE = ("The H100 SXM has 80 GB of HBM3 memory and connects to other GPUs over NVLink at 900 GB/s. "
           "Tensor parallelism splits every layer across GPUs, so it needs a fast interconnect.")


async def test_a_copied_passage_is_drafted_and_the_text_is_what_plain_decoding_writes() -> None:
    messages = [ChatMessage("user", f"Repeat this text exactly: {PASSAGE}")]
    greedy = GenerationParams(max_tokens=48, temperature=0.0)
    plain = LlamaCppBackend(SMALL_MODEL, n_ctx=1024, threads=2)
    lookup = LlamaCppBackend(SMALL_MODEL, n_ctx=1024, threads=2, lookup_draft_tokens=6)
    for llm in (plain, lookup):
        await llm.load()
    try:
        chunks = [[c async for c in llm.stream(messages, greedy)] for llm in (plain, lookup)]
        texts = ["".join(c.text for c in run if isinstance(c, TextDelta)) for run in chunks]
        assert "80 GB of HBM3" in texts[0] and texts[0] == texts[1]
        usage = [run[-1] for run in chunks]
        assert all(isinstance(u, Finished) for u in usage)
        assert usage[0] == usage[1], "the same usage: no drafted token left in the context counts as prompt"
        drafter = lookup.llama.draft_model
        assert isinstance(drafter, PromptLookupDraft)
        assert drafter.accepted > 10, "the repeated passage was drafted and kept"
        assert plain.llama.draft_model is None
    finally:
        for llm in (plain, lookup):
            await llm.aclose()


def test_every_token_kept_is_the_models_own_greedy_choice() -> None:
    """Teacher-forced: each token written with drafts is the argmax of the model's logits after the tokens
    before it. Not the same text as plain decoding token for token: a batch of tokens is evaluated with other
    float sums than one token, which flips near-ties (margins of 0.04-0.2 logits seen on the small model)."""
    import llama_cpp

    backend = LlamaCppBackend(SMALL_MODEL, n_ctx=1024, threads=2, lookup_draft_tokens=6)
    llm = backend._load_sync()
    forced = llama_cpp.Llama(str(SMALL_MODEL), n_ctx=1024, n_threads=2, logits_all=True, verbose=False)
    try:
        drafter = llm.draft_model
        for question in ("what does tensor parallelism need?", "how fast is NVLink here?"):
            prompt = llm.tokenize(f"Passage: {PASSAGE}\nQuestion: {question}\nAnswer in the passage's words:"
                                  .encode(), add_bos=True, special=False)
            written: list[int] = []
            for token in llm.generate(prompt, temp=0.0):
                written.append(token)
                if len(written) == 40 or token == llm.token_eos():
                    break
            forced.reset()
            forced.eval(prompt + written)
            logits = forced.scores[len(prompt) - 1: len(prompt) + len(written) - 1]
            gaps = logits.max(axis=1) - logits[np.arange(len(written)), written]
            assert float(gaps.max()) < 0.5, (question, gaps.round(2).tolist())
        assert drafter.accepted > 5
    finally:
        llm.close()
        forced.close()


def test_drafts_are_on_by_default_only_where_the_model_runs_on_a_gpu() -> None:
    from infra.settings import LLMSettings
    from models import GPU_LOOKUP_DRAFT_TOKENS, build_backend, lookup_draft_tokens

    assert lookup_draft_tokens(LLMSettings(n_gpu_layers=0)) == 0
    assert lookup_draft_tokens(LLMSettings(n_gpu_layers=-1)) == GPU_LOOKUP_DRAFT_TOKENS
    assert lookup_draft_tokens(LLMSettings(n_gpu_layers=0, lookup_draft_tokens=7)) == 7
    assert lookup_draft_tokens(LLMSettings(n_gpu_layers=-1, lookup_draft_tokens=0)) == 0
    backend = build_backend(LLMSettings(model_path=SMALL_MODEL, n_gpu_layers=-1))
    assert isinstance(backend, LlamaCppBackend) and backend.lookup_draft_tokens == GPU_LOOKUP_DRAFT_TOKENS
