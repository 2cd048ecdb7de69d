"""All command routers, aggregated in one place in the order they must match."""

from __future__ import annotations

from aiogram import Router

from bot.routers import basics


def build_root_router() -> Router:
    root = Router(name="root")
    root.include_routers(basics.router)
    return root
