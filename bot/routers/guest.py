"""Guest mode (Bot API 10.0): someone @mentions the bot in a chat it is not a member of.

The update is a ``guest_message`` (a Message with ``guest_query_id``); the bot answers once, with
``answerGuestQuery`` and one :class:`InlineQueryResultArticle` that Telegram posts into that chat. The bot sees
only that message, so there is no conversation history here and no streaming: the answer is computed whole.

What the message is gets decided by the same intent classifier as everywhere (``app/intents.py``): a
glossary question is answered by the same Answerer with the same sentence verification as in private chats;
``/fit …`` by the fit engine; ``/quote …`` is priced without being stored (a guest chat rents nothing: there
is no button, and renting happens in a private chat). Rate limits and the language rules are the private
chat's (the middlewares run for this observer too; the reply language follows /settings, else the question).
"""

from __future__ import annotations

import hashlib
import logging

from aiogram import Bot, Router
from aiogram.types import InlineQueryResultArticle, InputTextMessageContent, Message

from app.intents import Intent, IntentClassifier
from app.reply import FitReply, GlossaryReply, QuoteReply
from app.views.answer import render_reply
from app.views.fit import render as render_fit
from app.views.fit import render_error as render_fit_error
from app.views.quote import render_input_error, render_quote
from app.views.reply import render_text
from bot.deps import Answering
from bot.filters import strip_mention
from bot.output.rendering import split_html, strip_tags
from bot.preferences import LENGTH_TOKEN_SHARE, Resolved
from gpu.fit.request import FitInputError
from gpu.fit.service import FitService
from gpu.quote.request import QuoteInputError
from gpu.quote.service import QuoteService
from infra.i18n import Lang, t
from infra.markup import HTML, escape

log = logging.getLogger(__name__)
router = Router(name=__name__)

MAX_QUESTION_CHARS = 2000


def article(query_id: str, title: str, html_text: str) -> InlineQueryResultArticle:
    """One result, its text cut to the first message-sized chunk (a guest answer is one message)."""
    body = split_html(html_text)[0] if html_text else escape(title)
    description = strip_tags(body).replace("\n", " ")[:200]
    result_id = hashlib.sha1(query_id.encode()).hexdigest()  # 1-64 bytes whatever the query id looks like
    return InlineQueryResultArticle(id=result_id, title=title, description=description,
                                    input_message_content=InputTextMessageContent(message_text=body,
                                                                                  parse_mode="HTML"))


async def answer_guest(bot: Bot, message: Message, title: str, html_text: str) -> None:
    assert message.guest_query_id is not None
    await bot.answer_guest_query(guest_query_id=message.guest_query_id,
                                 result=article(message.guest_query_id, title, html_text))


@router.guest_message()
async def on_guest_message(message: Message, bot: Bot, intents: IntentClassifier, answering: Answering,
                           fit: FitService, quotes: QuoteService, reader: Resolved) -> None:
    lang = reader.lang
    if not message.guest_query_id:
        return
    me = await bot.me()  # cached by aiogram after the first call
    text = strip_mention(message.text or message.caption or "", me.username or "")
    if not text or len(text) > MAX_QUESTION_CHARS:
        await answer_guest(bot, message, t("guest_title_answer", lang), escape(t("guest_usage", lang)))
        return
    intent = intents.classify(text)
    if intent.kind == "command" and intent.command == "ask" and intent.text:  # "@bot /ask …"
        text = intent.text
        intent = Intent("glossary", text)
    try:
        title, body = await _reply(intent, text, reader, answering, fit, quotes, message)
    except Exception:  # the caller in the other chat still gets a sentence, never silence
        log.exception("guest query failed")
        title, body = t("guest_title_answer", lang), escape(t("feature_unavailable", lang))
    await answer_guest(bot, message, title, body)


async def _reply(intent: Intent, text: str, reader: Resolved, answering: Answering, fit: FitService,
                 quotes: QuoteService, message: Message) -> tuple[str, str]:
    lang, lang_explicit, gpu_data, answerer = reader.lang, reader.lang_explicit, answering.gpu_data, answering.answerer
    if intent.kind == "command":
        if intent.command == "fit":
            return t("guest_title_fit", lang), _fit(fit, intent.text, lang)
        if intent.command == "quote":
            return t("guest_title_quote", lang), _quote(quotes, intent.text, lang)
        return t("guest_title_answer", lang), escape(t("guest_usage", lang))
    # no history: a guest sees one message, and its reply must not lean on anyone's conversation
    reply = await answering.pipeline.reply(text, lang=lang if lang_explicit else None)
    reply_lang = reply.lang
    title = t("guest_title_answer", reply_lang)
    if isinstance(reply, FitReply):
        return t("guest_title_fit", reply_lang), render_text(reply, gpu_data, HTML)
    if isinstance(reply, QuoteReply):
        if reply.quote is None or reply.options:  # the request's problem in one line; configurations compared
            return t("guest_title_quote", reply_lang), render_text(reply, gpu_data, HTML)
        body = render_quote(reply.quote, reply_lang, HTML) + "\n\n" + escape(t("guest_quote_no_rent", reply_lang))
        return t("guest_title_quote", reply_lang), body
    if not isinstance(reply, GlossaryReply):
        return title, render_text(reply, gpu_data, HTML)
    if answerer is None:
        return title, escape(t("answers_unavailable", lang))
    user_id = message.from_user.id if message.from_user else None
    max_tokens = max(32, int(answerer.params.max_tokens * LENGTH_TOKEN_SHARE[reader.answer_length]))
    answer = await answerer.ask(reply.question, None, user_key=str(user_id) if user_id is not None else None,
                                lang=lang if lang_explicit else None, max_tokens=max_tokens,
                                topical=reply.topical)
    return title, render_reply(answer, HTML)


def _fit(service: FitService, text: str, lang: Lang) -> str:
    if not text.strip():
        return escape(t("fit_usage", lang))
    try:
        return render_fit(service.fit(text), lang, HTML, currency=service.currency)
    except FitInputError as exc:
        return render_fit_error(exc, lang, HTML) + "\n\n" + escape(t("fit_usage", lang))


def _quote(quotes: QuoteService, text: str, lang: Lang) -> str:
    """A price only: never stored, never rentable from a chat the bot is a guest in."""
    if not text.strip():
        return escape(t("quote_usage", lang))
    try:
        parsed = quotes.parse(text)
        preview = quotes.preview(parsed.request)
    except QuoteInputError as exc:
        return render_input_error(exc, lang, HTML) + "\n\n" + escape(t("quote_usage", lang))
    return render_quote(preview, lang, HTML) + "\n\n" + escape(t("guest_quote_no_rent", lang))
