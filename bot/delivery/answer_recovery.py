"""The answer-job sweeper: answers the questions whose replica died while answering them.

Every replica runs it, but only the holder of the ``answer-job-sweeper`` lease sweeps (at start and every
``ANSWER_JOB_SWEEP_INTERVAL_S``); each stale job is then taken over one by one, so even two sweepers at
once (a lease that expired under a stalled holder) never answer one job twice. See :mod:`bot.delivery.answer_jobs`.
"""

from __future__ import annotations

import logging

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError, TelegramBadRequest, TelegramForbiddenError
from aiogram.types import InlineKeyboardMarkup

from app.gaps.log import FeedbackStore
from app.views.answer import render_reply
from bot.delivery.answer_jobs import DONE, FAILED, AnswerJob, AnswerJobs
from bot.delivery.recorded_answers import record_answer
from bot.output.rendering import split_html
from bot.output.streaming import send_html
from bot.transport.retry import final_send
from bot.ui.keyboards import feedback_keyboard
from infra.i18n import t
from infra.markup import HTML, escape
from rag.answering.answerer import Answerer
from rag.answering.events import RECOVERED, Answer
from rag.retrieval.retriever import HybridRetriever

log = logging.getLogger(__name__)


class AnswerJobSweeper:
    def __init__(self, bot: Bot, jobs: AnswerJobs, answerer: Answerer | None,
                 feedback: FeedbackStore | None = None, retriever: HybridRetriever | None = None) -> None:
        self.bot = bot
        self.jobs = jobs
        self.answerer = answerer
        self.feedback = feedback
        self.retriever = retriever

    async def run_once(self) -> int:
        """Take over and answer every stale job; returns how many were answered."""
        await self.jobs.purge()
        answered = 0
        for job in await self.jobs.take_stale():
            log.warning("answer job %s: its replica stopped answering; recovering it (owner %d)",
                        job.id, job.attempts)
            if await self.deliver(job):
                answered += 1
        return answered

    async def deliver(self, job: AnswerJob) -> bool:
        """Answer one job this replica has taken over; True when the answer reached the chat."""
        async with self.jobs.owned(job.id, lambda: job.placeholder_message_id) as ownership:
            gave_up = job.attempts > self.jobs.settings.max_attempts
            answer: Answer | None = None
            if gave_up:
                log.error("answer job %s given up after %d owners", job.id, job.attempts - 1)
                body = escape(t("answer_job_gave_up", job.lang))
            elif self.answerer is None:
                body = escape(t("answers_unavailable", job.lang))
            else:
                answer = await self.answerer.recover(job.question, lang=job.answer_lang)
                body = render_reply(answer, HTML)
                if answer.notice != RECOVERED:  # a definition: say why it is late
                    body += f"\n\n<i>{escape(t('answer_recovered_note', answer.lang))}</i>"
            answer_id = await record_answer(self.feedback, self.retriever, job.question, answer) if answer else None
            if not await ownership.beat():
                return False  # another replica took it over meanwhile: it answers
            markup = feedback_keyboard(answer_id, answer.lang) if answer is not None and answer_id else None
            try:
                await self._send(job, body, markup)
            except TelegramForbiddenError:  # blocked, or removed from the group: nobody to answer
                log.info("answer job %s: the bot cannot write to chat %s", job.id, job.chat_id)
            except (TelegramAPIError, OSError) as exc:
                # left running: its heartbeat stops with this block, and the next sweep tries again
                log.warning("answer job %s: the recovered answer could not be sent: %s", job.id, exc)
                return False
            await ownership.done(FAILED if gave_up else DONE)
            return True

    async def _send(self, job: AnswerJob, body: str, reply_markup: InlineKeyboardMarkup | None) -> None:
        """Into the dead replica's placeholder when there was one (it shows a half answer), else a reply."""
        chunks = split_html(body)
        placeholder = job.placeholder_message_id
        if placeholder is not None and chunks:
            try:
                await final_send(lambda: self.bot.edit_message_text(
                    text=chunks[0], chat_id=job.chat_id, message_id=placeholder, parse_mode="HTML",
                    reply_markup=reply_markup if len(chunks) == 1 else None))
            except TelegramBadRequest as exc:  # deleted, or not editable any more: answer anew
                log.info("answer job %s: placeholder not editable (%s)", job.id, exc.message)
            else:
                for index, chunk in enumerate(chunks[1:], start=2):
                    await send_html(self.bot, job.target, chunk, reply=False,
                                    reply_markup=reply_markup if index == len(chunks) else None)
                return
        await send_html(self.bot, job.target, body, reply_markup=reply_markup)
