"""A short follow-up changes one thing of the quote or fit before it («а на месяц?», "and for 8 of them?")."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

import pytest

from app.followup import reads_as_follow_up
from app.pipeline import ReplyPipeline
from app.reply import CatalogReply, ClarifyReply, FitReply, GlossaryReply, QuoteReply, Reply
from app.views.reply import render_text
from rag.answering.prompt import Turn


async def _conversation(pipeline: ReplyPipeline, messages: Sequence[str]) -> list[Reply]:
    """Each message answered with the turns before it as history, the way every front keeps it."""
    history: list[Turn] = []
    replies = []
    for message in messages:
        reply = await pipeline.reply(message, history=history)
        replies.append(reply)
        shown = render_text(reply, pipeline.data) if not isinstance(reply, GlossaryReply) else "…"
        history += [Turn("user", message), Turn("assistant", shown)]
    return replies


async def test_a_quote_follow_up_changes_the_duration_then_the_count_then_the_pricing(
        pipeline: ReplyPipeline) -> None:
    week, month, four, spot = await _conversation(
        pipeline, ["сколько стоит 2 h100 на неделю", "а на месяц?", "а если 4 штуки?", "а спот?"])
    assert isinstance(week, QuoteReply) and week.request is not None and week.request.duration.hours == 168
    for reply, (count, hours, pricing) in zip((month, four, spot), ((2, 720, None), (4, 720, None),
                                                                    (4, 720, "spot")), strict=True):
        assert isinstance(reply, QuoteReply) and reply.request is not None and reply.quote is not None, reply
        request = reply.request
        assert (request.gpu_id, request.gpu_count, request.duration.hours) == ("h100-sxm", count, hours)
        assert (reply.routing.slots.pricing.value if reply.routing.slots.pricing else None) == pricing
        assert reply.routing.merged_with is not None
    # the same numbers as the whole request asked at once
    whole = await pipeline.reply("4 h100 на месяц")
    assert isinstance(whole, QuoteReply) and whole.quote is not None and four.quote is not None  # type: ignore[union-attr]
    assert four.quote.total == whole.quote.total  # type: ignore[union-attr]


async def test_an_english_quote_follow_up_and_a_thanks_in_between(pipeline: ReplyPipeline) -> None:
    replies = await _conversation(pipeline, ["how much would it cost me to keep 2 h100s running over the weekend",
                                             "and for 8 of them?", "thanks", "what about h200"])
    weekend, eight, _, h200 = replies
    assert isinstance(weekend, QuoteReply) and weekend.request is not None
    assert weekend.request.duration.hours == 48  # the weekend is two days
    assert isinstance(eight, QuoteReply) and eight.request is not None and eight.request.gpu_count == 8
    assert isinstance(h200, QuoteReply) and h200.request is not None
    assert (h200.request.gpu_id, h200.request.gpu_count, h200.request.duration.hours) == ("h200", 8, 48)
    assert h200.quote is not None and h200.quote.total == Decimal("3.79") * 8 * 48


async def test_a_fit_follow_up_changes_quantization_count_gpu_and_context(pipeline: ReplyPipeline) -> None:
    first, fp8, four, a100, context = await _conversation(
        pipeline, ["llama 70b на 2 h100", "а в fp8?", "а на 4 штуках?", "а на a100?", "и с контекстом 32к?"])
    expected = [("h100-sxm", 2, "bf16", None), ("h100-sxm", 2, "fp8", None), ("h100-sxm", 4, "fp8", None),
                ("a100-80gb", 4, "fp8", None), ("a100-80gb", 4, "fp8", 32768)]
    for reply, (gpu, count, quant, ctx) in zip((first, fp8, four, a100, context), expected, strict=True):
        assert isinstance(reply, FitReply) and reply.error is None, reply
        request = reply.results[0].request
        assert request.model.id == "llama-3.3-70b"
        assert (request.gpu.id if request.gpu else None, request.gpu_count, request.quant, request.context) \
            == (gpu, count, quant, ctx)


async def test_a_fit_without_a_gpu_follows_up_into_training(pipeline: ReplyPipeline) -> None:
    _, four_bit, lora = await _conversation(
        pipeline, ["сколько vram нужно для llama 3 70b", "а в 4 битах?", "а для обучения с лора?"])
    assert isinstance(four_bit, FitReply) and four_bit.results[0].request.quant == "nf4"
    assert isinstance(lora, FitReply) and lora.results[0].request.mode == "lora"


@pytest.mark.parametrize("follow_up", ["а что такое спот?", "сколько стоит 4090?", "расскажи про nvlink",
                                       "what is a committed term?"])
async def test_a_question_of_its_own_after_a_quote_is_not_a_follow_up(pipeline: ReplyPipeline,
                                                                      follow_up: str) -> None:
    _, reply = await _conversation(pipeline, ["2 h100 на неделю", follow_up])
    assert not isinstance(reply, QuoteReply), reply
    assert reply.routing.merged_with is None


async def test_a_whole_request_after_a_clarifying_question_is_not_glued_to_it(pipeline: ReplyPipeline) -> None:
    asked, whole = await _conversation(pipeline, ["посчитай аренду 4 H100", "сколько стоит 2 h100 на неделю"])
    assert isinstance(asked, ClarifyReply) and asked.missing == "duration"
    assert isinstance(whole, QuoteReply) and whole.request is not None
    assert (whole.request.gpu_id, whole.request.gpu_count) == ("h100-sxm", 2)
    assert whole.routing.merged_with is None


def test_what_reads_as_a_follow_up() -> None:
    assert reads_as_follow_up("а на месяц?") and reads_as_follow_up("and for 8 of them?")
    assert reads_as_follow_up("на месяц") and reads_as_follow_up("what about h200")
    assert not reads_as_follow_up("сколько будет стоить аренда восьми карт h100 на две недели со скидкой?")


async def test_a_bare_count_a_discount_and_a_monthly_price_refine_a_quote(pipeline: ReplyPipeline) -> None:
    _, week, two, committed = await _conversation(
        pipeline, ["привет! сколько стоит одна h200 в сутки?", "а неделя?", "а если две?", "а со скидкой за срок?"])
    for reply, (count, pricing) in zip((week, two, committed), ((1, None), (2, None), (2, "committed")),
                                       strict=True):
        assert isinstance(reply, QuoteReply) and reply.request is not None, reply
        assert (reply.request.gpu_id, reply.request.gpu_count, reply.request.duration.hours) == ("h200", count, 168)
        assert (reply.routing.slots.pricing.value if reply.routing.slots.pricing else None) == pricing
    _, monthly = await _conversation(pipeline, ["how much would 4 l40s cost for 2 weeks",
                                                "and what's the monthly price for that?"])
    assert isinstance(monthly, QuoteReply) and monthly.request is not None
    assert (monthly.request.gpu_id, monthly.request.gpu_count, monthly.request.duration.hours) == ("l40s", 4, 720)


async def test_a_hundred_hours_after_a_quote_is_hours_not_an_a100(pipeline: ReplyPipeline) -> None:
    _, hundred = await _conversation(pipeline, ["ок, а можно арендовать 3 h100 на 5 часов?", "а 100 часов?"])
    assert isinstance(hundred, QuoteReply) and hundred.request is not None
    assert (hundred.request.gpu_id, hundred.request.gpu_count, hundred.request.duration.hours) == ("h100-sxm", 3, 100)


async def test_a_context_alone_and_a_bit_width_refine_a_fit(pipeline: ReplyPipeline) -> None:
    _, longer, eight_bit = await _conversation(
        pipeline, ["can a 3090 handle llama 3 8b with 16k context", "what about 32k?", "and in 8-bit?"])
    assert isinstance(longer, FitReply) and longer.results[0].request.context == 32768
    assert isinstance(eight_bit, FitReply)
    assert (eight_bit.results[0].request.context, eight_bit.results[0].request.quant) == (32768, "int8_bnb")


@pytest.mark.parametrize(("fit", "price", "gpu", "count"), [
    ("llama 70b на 2 h100", "how much for a week?", "h100-sxm", 2),
    ("хочу обучить свою модель на 7b параметров с нуля, какие карты брать?",
     "а сколько это будет стоить на неделю?", None, None),
    # the GPU asked does not fit as one: as many of it as it takes (16), not the cheapest other GPU
    ("I need to serve qwen 2.5 72b for about 200 concurrent users, how many h100s?",
     "and how much would that cost for a week?", "h100-sxm", 16),
])
async def test_the_price_of_a_fit_is_the_quote_of_the_configuration_it_found(
        pipeline: ReplyPipeline, fit: str, price: str, gpu: str | None, count: int | None) -> None:
    found, quoted = await _conversation(pipeline, [fit, price])
    assert isinstance(found, FitReply) and isinstance(quoted, QuoteReply) and quoted.request is not None, quoted
    result = found.results[0]
    expected_gpu = gpu or (result.gpu.id if result.fits and result.rentable else result.cheapest[0].gpu_id)
    expected_count = count or (result.request.gpu_count if result.fits and result.rentable
                               else result.cheapest[0].count)
    assert (quoted.request.gpu_id, quoted.request.gpu_count, quoted.request.duration.hours) == (
        expected_gpu, expected_count, 168)


async def test_a_short_price_question_with_no_history_still_asks_for_the_gpu(pipeline: ReplyPipeline) -> None:
    reply = await pipeline.reply("how much for a week?")
    assert isinstance(reply, ClarifyReply) and reply.missing == "gpu"


async def test_a_greeting_starts_anew_instead_of_completing_the_question_before(pipeline: ReplyPipeline) -> None:
    asked, fresh = await _conversation(pipeline, ["а сколько это будет стоить на неделю?",
                                                  "добрый вечер, подскажите по ценам на a100"])
    assert isinstance(asked, ClarifyReply) and asked.missing == "gpu"
    assert not isinstance(fresh, QuoteReply) and fresh.routing.merged_with is None, fresh


@pytest.mark.parametrize("after", ["can a 3090 handle llama 3 8b", "llama 70b на 2 h100", "2 h100 на неделю"])
@pytest.mark.parametrize("said", ["hey", "hello", "понятно", "ок", "спасибо"])
async def test_small_talk_after_a_fit_or_a_quote_changes_nothing(pipeline: ReplyPipeline, after: str,
                                                                said: str) -> None:
    _, reply = await _conversation(pipeline, [after, said])
    assert not isinstance(reply, FitReply | QuoteReply) and reply.routing.merged_with is None, reply


async def test_a_fit_change_after_the_fit_s_price_changes_the_fit(pipeline: ReplyPipeline) -> None:
    found, quoted, changed = await _conversation(pipeline, [
        "I need to serve qwen 2.5 72b for about 200 concurrent users, how many h100s?",
        "and how much would that cost for a month?", "what if I use fp8?"])
    assert isinstance(found, FitReply) and isinstance(quoted, QuoteReply), quoted
    assert isinstance(changed, FitReply), changed
    request = changed.results[0].request
    assert (request.model.id, request.quant, request.batch) == ("qwen2.5-72b", "fp8", 200)


async def test_a_gpus_price_after_a_fit_is_its_price_and_a_time_after_a_price_is_its_quote(
        pipeline: ReplyPipeline) -> None:
    """«а сколько стоит час l40s» after a fit asks the L40S's price (the fit on it was shown before); then
    «а на 4090?» that GPU's price, and «а если 4 штуки на неделю?» the quote of the GPU priced last."""
    fit, l40s, rtx, four = await _conversation(pipeline, ["what's the cheapest way to run flux dev",
                                                          "а сколько стоит час l40s", "а на 4090?",
                                                          "а если 4 штуки на неделю?"])
    assert isinstance(fit, FitReply)
    for reply, gpu in ((l40s, "NVIDIA L40S 48GB"), (rtx, "NVIDIA GeForce RTX 4090 24GB")):
        assert isinstance(reply, CatalogReply) and reply.routing.intent == "price", reply
        assert gpu in render_text(reply, pipeline.data)
    assert isinstance(four, QuoteReply) and four.request is not None, four
    assert (four.request.gpu_id, four.request.gpu_count, four.request.duration.hours) == ("rtx-4090", 4, 168)


@pytest.mark.parametrize(("ask", "then"), [("I need 640GB of VRAM, what are my options", "for a week"),
                                           ("нужно 1000 гб видеопамяти, что посоветуете?", "а на неделю?")])
async def test_a_memory_total_gets_the_sets_adding_up_to_it_then_their_quotes_for_a_term(
        pipeline: ReplyPipeline, ask: str, then: str) -> None:
    """More memory than any card we rent is a total: the sets of GPUs adding up to it, per hour, and the term
    said next prices each set."""
    options, week = await _conversation(pipeline, [ask, then])
    assert isinstance(options, CatalogReply) and options.routing.intent == "price", options
    shown = render_text(options, pipeline.data)
    assert "MI300X" in shown and ("640 GB" in shown or "1000 ГБ" in shown)
    assert isinstance(week, QuoteReply) and week.memory_in_total and week.options, week
    assert all(request.duration.hours == 168 for request, _ in week.options)
