"""Dispatcher middlewares: logging and metrics, de-duplication, allow-list, error boundary, rate limits,
language. :func:`install` registers them in the order they must wrap each other."""

from __future__ import annotations

from aiogram import Dispatcher

from bot.delivery.dedupe import DedupeMiddleware
from bot.delivery.dedupe_store import UpdateClaims
from bot.middlewares.context import AllowListMiddleware, PreferencesMiddleware
from bot.middlewares.errors import ErrorBoundaryMiddleware
from bot.middlewares.observe import ObserveMiddleware
from bot.middlewares.ratelimit import RateLimitMiddleware, RateLimits, build_rate_limits
from bot.preferences import PreferenceStore
from infra.settings import Settings


def install(dispatcher: Dispatcher, settings: Settings, claims: UpdateClaims,
            preferences: PreferenceStore, rate_limits: RateLimits | None = None) -> None:
    """`rate_limits`: the buckets (shared in Redis with DB_REDIS_URL); built from `settings` when not given,
    then nobody closes them: the bot passes its runtime's."""
    # Outer update middlewares run in registration order: the first one wraps all the others.
    dispatcher.update.outer_middleware(ObserveMiddleware())
    dispatcher.update.outer_middleware(DedupeMiddleware(claims))
    dispatcher.update.outer_middleware(AllowListMiddleware(settings.telegram.allowed_chats))
    dispatcher.update.outer_middleware(ErrorBoundaryMiddleware())
    # Inner middlewares run only for updates a handler matched: group chatter costs nothing here.
    prefs = PreferencesMiddleware(preferences)
    limits = RateLimitMiddleware(rate_limits or build_rate_limits(settings))
    for observer in (dispatcher.message, dispatcher.callback_query, dispatcher.inline_query,
                     dispatcher.edited_message, dispatcher.guest_message):
        observer.middleware(prefs)
        observer.middleware(limits)


__all__ = ["install"]
