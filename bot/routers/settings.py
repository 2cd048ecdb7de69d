"""/settings: language and answer length — per user in private chats, per group for its admins."""

from __future__ import annotations

from aiogram import Bot, F, Router
from aiogram.enums import ChatMemberStatus, ChatType
from aiogram.filters import Command
from aiogram.types import CallbackQuery, InlineKeyboardMarkup, Message
from aiogram.utils.keyboard import InlineKeyboardBuilder

from bot.output.notices import Notices
from bot.output.streaming import reply_html
from bot.preferences import ANSWER_LENGTHS, LANGS, Preferences, PreferenceStore, scope_for
from bot.transport.retry import final_send
from bot.ui.callbacks import SettingsCallback
from infra.i18n import Lang, t
from infra.markup import escape

router = Router(name=__name__)
ADMIN_STATUSES = {ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.CREATOR}
LANG_NAMES = {"ru": "Русский", "en": "English"}


async def _is_admin(bot: Bot, chat_id: int, user_id: int) -> bool:
    member = await bot.get_chat_member(chat_id, user_id)
    return member.status in ADMIN_STATUSES


def _render(prefs: Preferences, lang: Lang, group: bool) -> tuple[str, InlineKeyboardMarkup]:
    shown_lang = LANG_NAMES[prefs.lang] if prefs.lang else t("setting_auto", lang)
    shown_length = t(f"length_{prefs.answer_length or 'normal'}", lang)
    text = escape(t("settings_title_chat" if group else "settings_title_user", lang,
                    language=shown_lang, length=shown_length))
    builder = InlineKeyboardBuilder()
    for code in LANGS:
        mark = "✓ " if prefs.lang == code else ""
        builder.button(text=mark + LANG_NAMES[code], callback_data=SettingsCallback(field="lang", value=code))
    builder.button(text=("✓ " if prefs.lang is None else "") + t("setting_auto", lang),
                   callback_data=SettingsCallback(field="lang", value="auto"))
    for length in ANSWER_LENGTHS:
        mark = "✓ " if (prefs.answer_length or "normal") == length else ""
        builder.button(text=mark + t(f"length_{length}", lang),
                       callback_data=SettingsCallback(field="len", value=length))
    builder.adjust(3, 3)
    return text, builder.as_markup()


@router.message(Command("settings"))
async def on_settings(message: Message, bot: Bot, preferences: PreferenceStore, lang: Lang,
                      notices: Notices | None = None) -> None:
    group = message.chat.type != ChatType.PRIVATE
    if message.from_user is None:
        return
    if group and not await _is_admin(bot, message.chat.id, message.from_user.id):
        await (notices or Notices()).to_sender(message, t("settings_admin_only", lang))
        return
    scope = scope_for("chat", message.chat.id) if group else scope_for("user", message.from_user.id)
    text, markup = _render(await preferences.get(scope), lang, group)
    await reply_html(message, text, reply_markup=markup)


@router.callback_query(SettingsCallback.filter(F.field.in_({"lang", "len"})))
async def on_settings_button(query: CallbackQuery, callback_data: SettingsCallback, bot: Bot,
                             preferences: PreferenceStore, lang: Lang, notices: Notices | None = None) -> None:
    notices = notices or Notices()
    message = query.message
    if not isinstance(message, Message):
        await query.answer(t("button_expired", lang), show_alert=True)
        return
    group = message.chat.type != ChatType.PRIVATE
    if group and not await _is_admin(bot, message.chat.id, query.from_user.id):
        await notices.to_presser(query, t("settings_admin_only", lang))
        return
    scope, subject = ((scope_for("chat", message.chat.id), message.chat.id) if group
                      else (scope_for("user", query.from_user.id), query.from_user.id))
    if callback_data.field == "lang":
        if callback_data.value not in (*LANGS, "auto"):
            await notices.to_presser(query, t("button_expired", lang))
            return
        new_lang = None if callback_data.value == "auto" else callback_data.value
        prefs = await preferences.set(scope, subject, lang=new_lang)  # type: ignore[arg-type]
        lang = prefs.lang or lang
    else:
        if callback_data.value not in ANSWER_LENGTHS:
            await notices.to_presser(query, t("button_expired", lang))
            return
        prefs = await preferences.set(scope, subject, answer_length=callback_data.value)
    text, markup = _render(prefs, lang, group)
    if text != message.html_text or markup != message.reply_markup:
        await final_send(lambda: message.edit_text(text, reply_markup=markup))
    await query.answer(t("settings_saved", lang))
