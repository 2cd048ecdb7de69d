"""/terms: browse the glossary by category with inline keyboards (edited in place, paginated)."""

from __future__ import annotations

from aiogram import Router
from aiogram.filters import Command
from aiogram.types import CallbackQuery, InlineKeyboardMarkup, Message
from aiogram.utils.keyboard import InlineKeyboardBuilder

from app.services import Services
from app.views.answer import render_card
from bot.output.notices import Notices
from bot.output.rendering import split_html
from bot.output.streaming import reply_html
from bot.transport.retry import final_send
from bot.ui.callbacks import TermsCallback
from infra.i18n import Lang, has, t
from infra.markup import HTML, escape
from rag.glossary import GlossaryEntry

router = Router(name=__name__)
PAGE_SIZE = 8


class Glossary:
    """The entries sorted for browsing: by category, then term."""

    def __init__(self, entries: list[GlossaryEntry]) -> None:
        self.entries = sorted(entries, key=lambda e: (e.category, e.term.lower()))
        self.categories = sorted({e.category for e in self.entries})

    def in_category(self, index: int) -> list[int]:
        category = self.categories[index]
        return [i for i, e in enumerate(self.entries) if e.category == category]


# The sorted view of the current entry list; the glossary's owner hands out a new list after an edit.
_BROWSABLE: list[tuple[list[GlossaryEntry], Glossary]] = []


def browsable(services: Services) -> Glossary:
    entries = services.glossary.get()
    if not _BROWSABLE or _BROWSABLE[0][0] is not entries:
        _BROWSABLE[:] = [(entries, Glossary(entries))]
    return _BROWSABLE[0][1]


def category_name(category: str, lang: Lang) -> str:
    key = f"category_{category}"
    return t(key, lang) if has(key) else category.capitalize()


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
        builder.button(text=glossary.entries[entry].term[:60],
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
    builder = InlineKeyboardBuilder()
    builder.button(text=t("button_back", lang), callback_data=TermsCallback(view="cat", category=category,
                                                                           page=page))
    return split_html(render_card(glossary.entries[entry], lang, HTML))[0], builder.as_markup()


@router.message(Command("terms"))
async def on_terms(message: Message, services: Services, lang: Lang) -> None:
    glossary = browsable(services)
    if not glossary.entries:
        await reply_html(message, escape(t("terms_empty", lang)))
        return
    text, markup = categories_view(glossary, lang)
    await reply_html(message, text, reply_markup=markup)


@router.callback_query(TermsCallback.filter())
async def on_terms_button(query: CallbackQuery, callback_data: TermsCallback, services: Services,
                          lang: Lang, notices: Notices | None = None) -> None:
    glossary = browsable(services)
    message = query.message
    valid_category = 0 <= callback_data.category < len(glossary.categories)
    valid_entry = 0 <= callback_data.entry < len(glossary.entries)
    if not isinstance(message, Message) or not valid_category or not valid_entry:
        await (notices or Notices()).to_presser(query, t("button_expired", lang))
        return
    if callback_data.view == "cat":
        text, markup = category_view(glossary, callback_data.category, callback_data.page, lang)
    elif callback_data.view == "term":
        text, markup = term_view(glossary, callback_data.entry, callback_data.category, callback_data.page, lang)
    else:
        text, markup = categories_view(glossary, lang)
    if text != message.html_text or markup != message.reply_markup:
        await final_send(lambda: message.edit_text(text, reply_markup=markup))
    await query.answer()
