"""Last router: a button press nobody handled (stale, from an old version, or forged callback data) gets a
polite "this button has expired" instead of a spinner that never stops."""

from __future__ import annotations

from aiogram import Router
from aiogram.types import CallbackQuery

from infra.i18n import Lang, t

router = Router(name=__name__)


@router.callback_query()
async def on_unknown_button(callback: CallbackQuery, lang: Lang = "ru") -> None:
    await callback.answer(t("button_expired", lang), show_alert=False)
