"""Last router: a button press nobody handled (stale, from an old version, or forged callback data) gets a
polite "this button has expired" instead of a spinner that never stops."""

from __future__ import annotations

from aiogram import Router
from aiogram.types import CallbackQuery

from bot.output.notices import Notices
from infra.i18n import Lang, t

router = Router(name=__name__)


@router.callback_query()
async def on_unknown_button(callback: CallbackQuery, lang: Lang = "ru", notices: Notices | None = None) -> None:
    # in a group only the presser sees it (ephemeral); elsewhere a toast, as before
    await (notices or Notices()).to_presser(callback, t("button_expired", lang), alert=False)
