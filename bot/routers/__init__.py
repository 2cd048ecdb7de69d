"""All command routers, aggregated in one place in the order they must match."""

from __future__ import annotations

from aiogram import Router

from bot.routers import ask, basics, fallback, fit, gpus, inline, prices, quote, settings, stop, terms


def build_root_router() -> Router:
    root = Router(name="root")
    root.include_routers(basics.router, stop.router, settings.router, terms.router, gpus.router,
                         inline.router)
    # Domain routers (/fit, /quote and its FSM) go here, before ask.
    root.include_router(fit.router)
    root.include_router(quote.router)
    # Price questions are answered from the price list, never by the model.
    root.include_router(prices.router)
    # Last: in private chats any remaining plain text is a question.
    root.include_router(ask.router)
    # Buttons no router claimed (stale or forged callback data) still get an answer.
    root.include_router(fallback.router)
    return root
