"""All routers, aggregated in one place.

No policy depends on this order: what a free-text message is (a price, fit or glossary question) is
decided by the intent classifier inside ``ask``. The order only says that commands and flows are tried
before free text, and that unclaimed buttons get an answer last.
"""

from __future__ import annotations

from aiogram import Router

from bot.routers import (
    admin,
    ask,
    basics,
    fallback,
    feedback,
    fit,
    gpus,
    guest,
    inline,
    placements,
    quote,
    settings,
    stop,
    terms,
    topics,
)


def build_root_router() -> Router:
    root = Router(name="root")
    root.include_routers(basics.router, stop.router, settings.router, terms.router, gpus.router,
                         inline.router, topics.router)
    # @mentions in chats the bot is not in (Bot API 10.0 guest mode): their own update type
    root.include_router(guest.router)
    root.include_router(fit.router)
    # operators' commands; vote buttons and the «неверно» reason (a typed line while it waits for one)
    root.include_router(admin.router)
    root.include_router(feedback.router)
    # the guided /quote flow takes typed durations while it waits for one: before free text
    root.include_router(quote.router)
    # «Арендовать» under a quote, /placements and its buttons
    root.include_router(placements.router)
    # free text: a question (its intent picks price list, fit engine or answerer)
    root.include_router(ask.router)
    # Buttons no router claimed (stale or forged callback data) still get an answer.
    root.include_router(fallback.router)
    return root
