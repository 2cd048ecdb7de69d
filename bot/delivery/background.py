"""The bot's background work that needs the bot itself: placement reminders and the answer-job sweeper.

Each runs on one replica at a time (a lease). They start with the dispatcher (``startup``: the bot exists)
and stop on its shutdown, before the bot's session closes, so nothing is sent after shutdown.
"""

from __future__ import annotations

import asyncio

from aiogram import Bot

from app.gaps.log import FeedbackStore
from app.services import Services
from bot.delivery.answer_jobs import AnswerJobs
from bot.delivery.answer_recovery import AnswerJobSweeper
from bot.delivery.placement_reminders import ReminderPoller, stop_task
from bot.preferences import PreferenceStore
from infra.leases import Lease, run_exclusively
from infra.settings import Settings


class BackgroundTasks:
    def __init__(self, settings: Settings, services: Services, preferences: PreferenceStore,
                 answer_jobs: AnswerJobs | None, feedback: FeedbackStore | None) -> None:
        self.settings = settings
        self.services = services
        self.preferences = preferences
        self.answer_jobs = answer_jobs
        self.feedback = feedback
        self.reminders: asyncio.Task[None] | None = None  # placement reminders
        self.sweeper: asyncio.Task[None] | None = None  # recovers other replicas' stale answer jobs

    async def start(self, bot: Bot) -> None:
        settings, engine = self.settings, self.services.engine
        if self.reminders is None:
            poller = ReminderPoller(bot, self.services.placements, self.preferences,
                                    settings.telegram.placement_reminder_interval_s)
            lease = Lease(engine, "placement-reminders", ttl_s=settings.lease.ttl_s)
            self.reminders = asyncio.create_task(poller.run_forever(lease), name="placement-reminders")
        # one replica at a time (a lease) recovers the questions of dead replicas
        if self.sweeper is None and self.answer_jobs is not None:
            sweeper = AnswerJobSweeper(bot, self.answer_jobs, self.services.answerer, self.feedback,
                                       self.services.retriever)
            lease = Lease(engine, "answer-job-sweeper", ttl_s=settings.lease.ttl_s)
            self.sweeper = asyncio.create_task(
                run_exclusively(lease, settings.answer_job.sweep_interval_s, sweeper.run_once), name="answer-sweeper")

    async def stop(self) -> None:
        await stop_task(self.reminders)
        self.reminders = None
        await stop_task(self.sweeper)
        self.sweeper = None
