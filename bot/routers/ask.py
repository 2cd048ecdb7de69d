"""Questions: ``/ask …`` anywhere, any plain text in private chats, and addressed messages in groups.

What a message is, and its reply, are decided once, by :class:`app.pipeline.ReplyPipeline` (the console
chat and ``anchorgpu ask`` ask the same one): this router only renders the typed reply (:mod:`bot.output.replies`),
or streams a glossary answer. A clarifying question's buttons (:class:`bot.ui.callbacks.ClarifyButton`) send
their value on through the same pipeline. The answer streams through :class:`bot.output.streaming.AnswerStream`;
the final text is rendered as escaped HTML with its sources and split under Telegram's limit. Context is
kept per (chat, forum topic).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Literal

from aiogram import Bot, F, Router
from aiogram.enums import ChatType
from aiogram.exceptions import TelegramAPIError
from aiogram.filters import Command, CommandObject
from aiogram.types import CallbackQuery, InlineKeyboardMarkup, Message
from sqlalchemy.exc import SQLAlchemyError

from app.gaps.log import FeedbackStore
from app.reply import GlossaryReply, RefusalReply, SmallTalkReply
from app.views.answer import render_reply
from app.views.reply import render_text
from bot import metrics
from bot.delivery.answer_jobs import AnswerJob, AnswerJobs, Ownership
from bot.delivery.answer_recovery import AnswerJobSweeper
from bot.delivery.generations import Generation
from bot.delivery.recorded_answers import record_answer
from bot.deps import Answering, Output
from bot.filters import AddressedQuestion, Sync, thread_of
from bot.output.notices import PersonalNotice
from bot.output.replies import send_reply
from bot.output.streaming import AnswerStream, ChatPacer, Target, new_draft_id, reply_html, send_html
from bot.preferences import LENGTH_TOKEN_SHARE, Resolved
from bot.ui.callbacks import ClarifyButton
from bot.ui.keyboards import feedback_keyboard, stop_keyboard
from infra.i18n import Lang, t
from infra.markup import HTML, escape
from rag.answering.conversation import conversation_key
from rag.answering.events import Answer, Delta, Done, Generating, Queued, refusal
from rag.answering.prompt import Turn
from rag.retrieval.retriever import HybridRetriever

log = logging.getLogger(__name__)
router = Router(name=__name__)

MAX_QUESTION_CHARS = 2000


@router.message(Command("ask"))
async def on_ask(message: Message, command: CommandObject, bot: Bot, answering: Answering, output: Output,
                 reader: Resolved) -> None:
    question = (command.args or "").strip()
    replied = message.reply_to_message
    if not question and replied is not None and (replied.text or replied.caption):
        question = (replied.text or replied.caption or "").strip()  # "/ask" in reply to a question
    await on_question(message, question, bot, answering, output, reader)


@router.message(Sync(F.text), AddressedQuestion())
async def on_question(message: Message, question: str, bot: Bot, answering: Answering, output: Output,
                      reader: Resolved) -> None:
    lang, answerer = reader.lang, answering.answerer
    if not question:
        await reply_html(message, escape(t("ask_usage", lang)))
        return
    if len(question) > MAX_QUESTION_CHARS:
        await reply_html(message, escape(t("question_too_long", lang, length=len(question),
                                           limit=MAX_QUESTION_CHARS)))
        return
    key = conversation_key(message.chat.id, thread_of(message))
    history = await answerer.history(key) if answerer is not None else []  # read once, for every step
    # the answerer's rule for every kind of answer: the user's setting, else the question's language
    reply = await answering.pipeline.reply(question, history=history,
                                           lang=lang if reader.lang_explicit else None)
    if isinstance(reply, GlossaryReply):
        # the question as the pipeline read it (Russian typed in Latin letters spelled in Cyrillic, a follow-up
        # completed), as the console and the guest front answer it
        await answer_question(message, reply.question, bot, answering, output, reader, history=history,
                              topical=reply.topical)
        return
    if isinstance(reply, RefusalReply) and reply.reason.key == "pipeline_off_topic":
        await _refuse_with_feedback(message, reply, answering.feedback, answering.retriever)
        return
    if answerer is not None and not isinstance(reply, RefusalReply | SmallTalkReply):
        # a follow-up ("а у неё?", «на неделю» after "how long?") takes its subject from this turn: stored
        # before the reply goes out, so that a button pressed at once under it finds the turn
        await answerer.remember_reply(key, question, render_text(reply, answering.gpu_data))
    await send_reply(message, bot, reply, answering.gpu_data, output.rich)


async def _refuse_with_feedback(message: Message, reply: RefusalReply, feedback: FeedbackStore | None,
                                retriever: HybridRetriever | None) -> None:
    """An off-topic message is one the glossary does not cover: logged as a gap for the operators' report,
    with the vote buttons, as the answerer's own out-of-scope refusals are."""
    answer_id = await record_answer(feedback, retriever, reply.question, refusal(reply.lang, reply.reason))
    await reply_html(message, escape(reply.reason.render(reply.lang)),
                     reply_markup=feedback_keyboard(answer_id, reply.lang) if answer_id else None)


@router.callback_query(ClarifyButton.filter())
async def on_clarify_button(callback: CallbackQuery, callback_data: ClarifyButton, bot: Bot,
                            answering: Answering, output: Output, reader: Resolved) -> None:
    """A common answer pressed under a clarifying question: sent on as the user's next message."""
    message = callback.message
    if not isinstance(message, Message):
        await callback.answer(t("clarify_stale", reader.lang), show_alert=False)
        return
    await callback.answer()
    with contextlib.suppress(TelegramAPIError):  # the question keeps its text; its buttons are spent
        await message.edit_reply_markup(reply_markup=None)
    # as before: a pressed answer is answered without vote buttons, «Стоп», notices or an answer job
    await on_question(message, callback_data.value, bot, Answering(answering.pipeline, answering.gpu_data,
                                                                   answering.answerer),
                      Output(output.pacer, rich=output.rich), reader)


async def answer_question(message: Message, question: str, bot: Bot, answering: Answering, output: Output,
                          reader: Resolved, *, history: list[Turn] | None = None, topical: bool = False) -> None:
    lang, lang_explicit, answerer = reader.lang, reader.lang_explicit, answering.answerer
    feedback, retriever, answer_jobs = answering.feedback, answering.retriever, answering.answer_jobs
    generations, notices = output.generations, output.notices
    is_private = message.chat.type == ChatType.PRIVATE
    thread_id = thread_of(message)
    target = Target(chat_id=message.chat.id, thread_id=thread_id,
                    reply_to_message_id=None if is_private else message.message_id, is_private=is_private)
    if answerer is None:
        await send_html(bot, target, escape(t("answers_unavailable", lang)))
        return
    user_id = message.from_user.id if message.from_user else None
    # /settings answer length scales the configured token budget
    max_tokens = max(32, int(answerer.params.max_tokens * LENGTH_TOKEN_SHARE[reader.answer_length]))
    opened = await _open_job(answer_jobs, message, question, target, lang, lang_explicit)
    if opened is False:
        return  # the same question, redelivered: a live replica is answering it, or has answered it
    if opened is not None and answer_jobs is not None and opened.attempts > 1:
        # redelivered after its replica died mid-answer: recovered as the sweeper recovers it (into the dead
        # replica's half-written placeholder, saying why), not answered a second time beside it
        await AnswerJobSweeper(bot, answer_jobs, answerer, feedback, retriever).deliver(opened)
        return
    job_id = opened.id if opened is not None else None
    draft_id = new_draft_id()
    generation = generations.start(message.chat.id, draft_id, user_id) if generations is not None else None
    # groups have no drafts (TEXTDRAFT_PEER_INVALID): the asker's «Стоп» rides on the placeholder
    stop_markup = (stop_keyboard(draft_id, user_id, lang)
                   if not is_private and generation is not None and user_id is not None else None)
    # in a group the queue position is the asker's business: ephemeral when Telegram allows it
    personal = (PersonalNotice(notices, bot, message.chat.id, user_id, thread_id)
                if not is_private and notices is not None and user_id is not None else None)
    asked = Asked(question, target, conversation_key(message.chat.id, thread_id), user_id, lang, lang_explicit,
                  max_tokens, history, topical, job_id)
    try:
        final, generation_s = await _stream_answer(bot, answering, output.pacer, asked,
                                                   Live(draft_id, stop_markup, generation, personal))
    finally:
        if generations is not None and generation is not None:
            generations.end(generation)
        if personal is not None:
            await personal.close()
    if final is None:
        return
    if generation is not None and generation.stop_requested and final.status == "cancelled":
        log.info("answer %s stopped by the asker after %d of %d tokens", generation.key, final.tokens,
                 max_tokens)
    _observe(final, generation_s)


@dataclass(frozen=True)
class Asked:
    """One question being answered: where, for whom, and how the answer may be made."""

    question: str
    target: Target
    conversation: str  # the conversation key its history is stored under
    user_id: int | None
    lang: Lang
    lang_explicit: bool  # chosen in /settings: the answer is in it whatever the question's language
    max_tokens: int
    history: list[Turn] | None
    topical: bool
    job_id: str | None  # the answer job that recovers it if this replica dies


@dataclass(frozen=True)
class Live:
    """What the user sees while it is answered: the draft, «Стоп» and the asker's own queue notice."""

    draft_id: int
    stop_markup: InlineKeyboardMarkup | None
    generation: Generation | None
    personal: PersonalNotice | None


async def _stream_answer(bot: Bot, answering: Answering, pacer: ChatPacer, asked: Asked, live: Live,
                         ) -> tuple[Answer | None, float]:
    answerer = answering.answerer
    assert answerer is not None
    question, lang, user_id, generation, personal = asked.question, asked.lang, asked.user_id, live.generation, \
        live.personal
    final: Answer | None = None
    first_delta_at: float | None = None
    generation_s = 0.0
    async with AnswerStream(bot, asked.target, lang, pacer, stop_markup=live.stop_markup,
                            draft_id=live.draft_id) as stream, \
            _job_held(answering.answer_jobs, asked.job_id, stream) as job:
        if generation is not None:
            generation.on_stop = stream.halt
        events = answerer.answer(question, asked.conversation,
                                 user_key=str(user_id) if user_id is not None else None,
                                 lang=lang if asked.lang_explicit else None, max_tokens=asked.max_tokens,
                                 cancel_key=generation.key if generation is not None else None,
                                 history=asked.history, topical=asked.topical)
        async with contextlib.aclosing(events):
            async for event in events:
                if generation is not None:
                    generation.apply_stop(answerer)  # a stop that came before the answer was queued
                if isinstance(event, Queued):
                    if not (personal is not None and event.position > 0
                            and await personal.show(t("queue_position", lang, position=event.position))):
                        stream.queued(event.position)
                elif isinstance(event, Generating):
                    if personal is not None:
                        await personal.close()
                    stream.started()  # "writing the answer…" while its first sentence is checked
                elif isinstance(event, Delta):
                    first_delta_at = first_delta_at or time.monotonic()
                    stream.delta(event.text)
                elif isinstance(event, Done):
                    final = event.answer
                    generation_s = time.monotonic() - first_delta_at if first_delta_at else 0.0
        if job is not None and not await job.beat():
            return None, 0.0  # stalled past the stale time and taken over: the taker answers, not us
        if final is None:  # the answerer promises a Done; never leave the user with nothing
            await stream.finish(escape(t("answer_empty", lang)))
            if job is not None:
                await job.done()
            return None, 0.0
        body = render_reply(final, HTML)
        if final.status == "cancelled" and final.notice and final.generated:  # stopped after some sentences
            body += f"\n\n<i>{escape(final.notice.render(final.lang))}</i>"
        answer_id = await record_answer(answering.feedback, answering.retriever, question, final)
        await stream.finish(body, reply_markup=feedback_keyboard(answer_id, final.lang) if answer_id else None)
        if job is not None:
            await job.done()
    return final, generation_s


# ---- answer jobs (bot/delivery/answer_jobs.py): a question outlives the replica that took it ------------------
async def _open_job(jobs: AnswerJobs | None, message: Message, question: str, target: Target, lang: Lang,
                    lang_explicit: bool) -> AnswerJob | Literal[False] | None:
    """The job this handler owns, None to answer without one, False when another owner has the question."""
    if jobs is None:
        return None
    job = AnswerJob(chat_id=target.chat_id, message_id=message.message_id, thread_id=target.thread_id,
                    user_id=message.from_user.id if message.from_user else None, is_private=target.is_private,
                    reply_to_message_id=target.reply_to_message_id, question=question, lang=lang,
                    answer_lang=lang if lang_explicit else None)
    try:
        return await jobs.open(job) or False
    except (SQLAlchemyError, OSError) as exc:  # the database is down: answer anyway, unprotected
        log.warning("answer job not recorded: %s", exc)
        return None


@contextlib.asynccontextmanager
async def _job_held(jobs: AnswerJobs | None, job_id: str | None, stream: AnswerStream,
                    ) -> AsyncIterator[Ownership | None]:
    """Heartbeat the job while the block answers (with the group placeholder's id, for a recovery to edit)."""
    if jobs is None or job_id is None:
        yield None
        return
    async with jobs.owned(job_id, lambda: stream.placeholder.message_id if stream.placeholder else None) as job:
        try:
            yield job
        except Exception:
            # This live replica failed and says so (the error boundary apologises; a webhook update comes
            # again): drop the job, so that no sweeper answers it as well. A cancelled handler (shutdown)
            # keeps it: another replica recovers it once it is stale.
            with contextlib.suppress(SQLAlchemyError, OSError):
                await jobs.release(job_id)
            raise
# ---- end answer jobs ---------------------------------------------------------------------------------


def _observe(answer: Answer, generation_s: float) -> None:
    if answer.ttft_s:
        metrics.ANSWER_TTFT.observe(answer.ttft_s)
    if answer.tokens:
        metrics.TOKENS.inc(answer.tokens)
        if generation_s > 0:
            metrics.TOKENS_PER_SECOND.set(answer.tokens / generation_s)
