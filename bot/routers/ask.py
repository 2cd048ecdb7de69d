"""Questions: ``/ask …`` anywhere, any plain text in private chats, and addressed messages in groups.

What a question is decided once, by :class:`app.intents.IntentClassifier` (the console chat and
``anchorgpu ask`` use the same one): a price question is answered from the price list, a fit question by
the fit engine, anything else by the answerer. The answer streams through :class:`bot.streaming.AnswerStream`;
the final text is rendered as escaped HTML with its sources and split under Telegram's limit. Context is
kept per (chat, forum topic).
"""

from __future__ import annotations

import contextlib
import logging
import time

from aiogram import Bot, F, Router
from aiogram.enums import ChatType
from aiogram.filters import Command, CommandObject
from aiogram.types import Message

from app.intents import IntentClassifier
from app.views.answer import render_reply
from app.views.catalog import render_rule_answer, render_spec_answer
from app.views.prices import render_price_answer
from bot import metrics
from bot.filters import AddressedQuestion, Sync, thread_of
from bot.preferences import LENGTH_TOKEN_SHARE, AnswerLength
from bot.rich import RichReplies
from bot.routers.feedback import feedback_keyboard
from bot.routers.fit import send_fit
from bot.streaming import AnswerStream, ChatPacer, Target, reply_html, send_html
from gpu.data import GpuData
from gpu.fit.service import FitService
from infra.i18n import Lang, t
from infra.markup import HTML, escape
from rag.answer import Answer, Answerer, Delta, Done, Generating, Queued
from rag.conversation import conversation_key
from rag.gaplog import FeedbackStore, nearest_entries, recorded_answer
from rag.prompt import detect_lang
from rag.retriever import HybridRetriever

log = logging.getLogger(__name__)
router = Router(name=__name__)

MAX_QUESTION_CHARS = 2000


@router.message(Command("ask"))
async def on_ask(message: Message, command: CommandObject, bot: Bot, intents: IntentClassifier,
                 gpu_data: GpuData, fit: FitService, answerer: Answerer | None, pacer: ChatPacer, lang: Lang,
                 lang_explicit: bool, answer_length: AnswerLength, feedback: FeedbackStore | None = None,
                 retriever: HybridRetriever | None = None, rich: RichReplies | None = None) -> None:
    question = (command.args or "").strip()
    replied = message.reply_to_message
    if not question and replied is not None and (replied.text or replied.caption):
        question = (replied.text or replied.caption or "").strip()  # "/ask" in reply to a question
    await on_question(message, question, bot, intents, gpu_data, fit, answerer, pacer, lang, lang_explicit,
                      answer_length, feedback, retriever, rich)


@router.message(Sync(F.text), AddressedQuestion())
async def on_question(message: Message, question: str, bot: Bot, intents: IntentClassifier, gpu_data: GpuData,
                      fit: FitService, answerer: Answerer | None, pacer: ChatPacer, lang: Lang,
                      lang_explicit: bool, answer_length: AnswerLength, feedback: FeedbackStore | None = None,
                      retriever: HybridRetriever | None = None, rich: RichReplies | None = None) -> None:
    if not question:
        await reply_html(message, escape(t("ask_usage", lang)))
        return
    if len(question) > MAX_QUESTION_CHARS:
        await reply_html(message, escape(t("question_too_long", lang, length=len(question),
                                           limit=MAX_QUESTION_CHARS)))
        return
    key = conversation_key(message.chat.id, thread_of(message))
    previous = await answerer.previous_question(key) if answerer is not None else None
    intent = intents.classify_question(question, previous)
    # the answerer's rule for every kind of answer: the user's setting, else the question's language
    reply_lang: Lang = lang if lang_explicit else detect_lang(question)
    if intent.kind == "price":
        await reply_html(message, render_price_answer(intent, gpu_data, reply_lang, HTML))
    elif intent.kind == "rule":
        await reply_html(message, render_rule_answer(intent, reply_lang, HTML))
    elif intent.kind == "gpu_spec":
        await reply_html(message, render_spec_answer(intent, gpu_data, reply_lang, HTML))
    elif intent.kind == "fit":
        await send_fit(message, bot, fit, question, reply_lang, rich=rich)
    else:
        await answer_question(message, question, bot=bot, answerer=answerer, pacer=pacer, lang=lang,
                              lang_explicit=lang_explicit, answer_length=answer_length, feedback=feedback,
                              retriever=retriever)


async def answer_question(message: Message, question: str, *, bot: Bot, answerer: Answerer | None,
                          pacer: ChatPacer, lang: Lang, lang_explicit: bool = False,
                          answer_length: AnswerLength = "normal", feedback: FeedbackStore | None = None,
                          retriever: HybridRetriever | None = None) -> None:
    is_private = message.chat.type == ChatType.PRIVATE
    thread_id = thread_of(message)
    target = Target(chat_id=message.chat.id, thread_id=thread_id,
                    reply_to_message_id=None if is_private else message.message_id, is_private=is_private)
    if answerer is None:
        await send_html(bot, target, escape(t("answers_unavailable", lang)))
        return
    user_id = message.from_user.id if message.from_user else None
    # /settings answer length scales the configured token budget
    max_tokens = max(32, int(answerer.params.max_tokens * LENGTH_TOKEN_SHARE[answer_length]))
    final: Answer | None = None
    first_delta_at: float | None = None
    generation_s = 0.0
    async with AnswerStream(bot, target, lang, pacer) as stream:
        events = answerer.answer(question, conversation_key(message.chat.id, thread_id),
                                 user_key=str(user_id) if user_id is not None else None,
                                 lang=lang if lang_explicit else None, max_tokens=max_tokens)
        async with contextlib.aclosing(events):
            async for event in events:
                if isinstance(event, Queued):
                    stream.queued(event.position)
                elif isinstance(event, Generating):
                    stream.started()  # "writing the answer…" while its first sentence is checked
                elif isinstance(event, Delta):
                    first_delta_at = first_delta_at or time.monotonic()
                    stream.delta(event.text)
                elif isinstance(event, Done):
                    final = event.answer
                    generation_s = time.monotonic() - first_delta_at if first_delta_at else 0.0
        if final is None:  # the answerer promises a Done; never leave the user with nothing
            await stream.finish(escape(t("answer_empty", lang)))
            return
        body = render_reply(final, HTML)
        if final.status == "cancelled" and final.notice and final.notice not in final.text:
            body += f"\n\n<i>{escape(final.notice)}</i>"
        answer_id = await _record(feedback, retriever, question, final)
        await stream.finish(body, reply_markup=feedback_keyboard(answer_id, final.lang) if answer_id else None)
    _observe(final, generation_s)


async def _record(feedback: FeedbackStore | None, retriever: HybridRetriever | None, question: str,
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


def _observe(answer: Answer, generation_s: float) -> None:
    if answer.ttft_s:
        metrics.ANSWER_TTFT.observe(answer.ttft_s)
    if answer.tokens:
        metrics.TOKENS.inc(answer.tokens)
        if generation_s > 0:
            metrics.TOKENS_PER_SECOND.set(answer.tokens / generation_s)
