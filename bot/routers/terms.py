"""/terms: browse the glossary by category with inline keyboards (edited in place, paginated)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from aiogram import Router
from aiogram.filters import Command
from aiogram.filters.callback_data import CallbackData
from aiogram.types import CallbackQuery, InlineKeyboardMarkup, Message
from aiogram.utils.keyboard import InlineKeyboardBuilder

from anchorgpu.settings import Settings
from anchorgpu.texts import Lang, t
from bot.rendering import escape, render_card, split_html
from bot.streaming import reply_html, with_retry_after

router = Router(name=__name__)
PAGE_SIZE = 8


class TermsCallback(CallbackData, prefix="terms"):
    view: str  # "cats" | "cat" | "term"
    category: int = 0
    page: int = 0
    entry: int = 0


class Glossary:
    def __init__(self, entries: list[tuple[str, str, str, str]]) -> None:
        # (term, definition, source, category), sorted by category then term
        self.entries = sorted(entries, key=lambda e: (e[3], e[0].lower()))
        self.categories = sorted({e[3] for e in self.entries})

    def in_category(self, index: int) -> list[int]:
        category = self.categories[index]
        return [i for i, e in enumerate(self.entries) if e[3] == category]


@lru_cache(maxsize=4)
def load(data_dir: Path) -> Glossary:
    from rag.glossary import load_glossary

    return Glossary([(e.term, e.definition, e.source, e.category) for e in load_glossary(data_dir)])


def category_name(category: str, lang: Lang) -> str:
    key = f"category_{category}"
    from anchorgpu.texts import MESSAGES

    return t(key, lang) if key in MESSAGES else category.capitalize()


def categories_view(glossary: Glossary, lang: Lang) -> tuple[str, InlineKeyboardMarkup]:
    builder = InlineKeyboardBuilder()
    for index, category in enumerate(glossary.categories):
        count = len(glossary.in_category(index))
        builder.button(text=f"{category_name(category, lang)} ({count})",
                       callback_data=TermsCallback(view="cat", category=index))
    builder.adjust(2)
    return escape(t("terms_categories", lang)), builder.as_markup()


def category_view(glossary: Glossary, index: int, page: int, lang: Lang) -> tuple[str, InlineKeyboardMarkup]:
    members = glossary.in_category(index)
    pages = max(1, -(-len(members) // PAGE_SIZE))
    page = min(max(0, page), pages - 1)
    builder = InlineKeyboardBuilder()
    for entry in members[page * PAGE_SIZE:(page + 1) * PAGE_SIZE]:
        builder.button(text=glossary.entries[entry][0][:60],
                       callback_data=TermsCallback(view="term", category=index, page=page, entry=entry))
    builder.adjust(2)
    nav = InlineKeyboardBuilder()
    if page > 0:
        nav.button(text=t("button_prev", lang), callback_data=TermsCallback(view="cat", category=index,
                                                                           page=page - 1))
    nav.button(text=t("button_back", lang), callback_data=TermsCallback(view="cats"))
    if page < pages - 1:
        nav.button(text=t("button_next", lang), callback_data=TermsCallback(view="cat", category=index,
                                                                           page=page + 1))
    builder.attach(nav)
    category = category_name(glossary.categories[index], lang)
    text = escape(t("terms_category", lang, category=category, count=len(members)))
    if pages > 1:
        text += f" ({page + 1}/{pages})"
    return text, builder.as_markup()


def term_view(glossary: Glossary, entry: int, category: int, page: int,
              lang: Lang) -> tuple[str, InlineKeyboardMarkup]:
    term, definition, source, _ = glossary.entries[entry]
    builder = InlineKeyboardBuilder()
    builder.button(text=t("button_back", lang), callback_data=TermsCallback(view="cat", category=category,
                                                                           page=page))
    return split_html(render_card(term, definition, source, lang))[0], builder.as_markup()


@router.message(Command("terms"))
async def on_terms(message: Message, settings: Settings, lang: Lang) -> None:
    glossary = load(settings.data.data_dir)
    if not glossary.entries:
        await reply_html(message, escape(t("terms_empty", lang)))
        return
    text, markup = categories_view(glossary, lang)
    await reply_html(message, text, reply_markup=markup)


@router.callback_query(TermsCallback.filter())
async def on_terms_button(query: CallbackQuery, callback_data: TermsCallback, settings: Settings,
                          lang: Lang) -> None:
    glossary = load(settings.data.data_dir)
    message = query.message
    valid_category = 0 <= callback_data.category < len(glossary.categories)
    valid_entry = 0 <= callback_data.entry < len(glossary.entries)
    if not isinstance(message, Message) or not valid_category or not valid_entry:
        await query.answer(t("button_expired", lang), show_alert=True)
        return
    if callback_data.view == "cat":
        text, markup = category_view(glossary, callback_data.category, callback_data.page, lang)
    elif callback_data.view == "term":
        text, markup = term_view(glossary, callback_data.entry, callback_data.category, callback_data.page, lang)
    else:
        text, markup = categories_view(glossary, lang)
    if text != message.html_text or markup != message.reply_markup:
        await with_retry_after(lambda: message.edit_text(text, reply_markup=markup), "editMessageText")
    await query.answer()
