"""Quotes as text in Russian or English: Telegram HTML (escaped) or plain text (console, CLI)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal

from app.views.table import Report, Table, Text
from gpu.quote.duration import Unit, format_amount
from gpu.quote.engine import Quote, QuoteLine, QuoteOption
from gpu.quote.request import QuoteInputError
from gpu.quote.store import IdempotencyConflictError, IssuedQuote
from infra.i18n import Lang, t
from infra.markup import PLAIN, Markup

_TERM_UNITS = {"day": Unit.DAY, "week": Unit.WEEK, "month": Unit.MONTH}



def _terms(quote: Quote, lang: Lang) -> list[str]:
    """Billable against requested hours, the effective rate, validity: the same lines as text or table."""
    requested = quote.requested_hours.normalize()
    shown = requested if requested == requested.to_integral_value() else requested.quantize(Decimal("0.01"))
    return [
        t("quote_hours", lang, billable=number(Decimal(quote.billable_hours), lang), requested=number(shown, lang)),
        t("quote_rate", lang, rate=money(quote.effective_hourly_rate, quote.currency, lang),
          cluster=money(quote.cluster_hourly_rate, quote.currency, lang)),
        t("quote_valid", lang, valid_until=_stamp(quote.valid_until), version=quote.price_list_version),
    ]

def number(value: Decimal, lang: Lang) -> str:
    """Thousands grouped, exact digits kept: 8,037.12 (en) / 8 037,12 (ru)."""
    text = format(value, ",f")
    if lang == "ru":
        text = text.replace(",", "\u00a0").replace(".", ",")
    return text


def money(value: Decimal, currency: str, lang: Lang) -> str:
    return f"{number(value, lang)} {currency}"


def pricing_label(pricing: str, lang: Lang) -> str:
    return t(f"quote_pricing_{pricing.replace('-', '_')}", lang)


def _stamp(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M")


def summary(quote: Quote, lang: Lang) -> str:
    return (f"{quote.gpu_name} × {quote.gpu_count} · {quote.duration.describe(lang)} · "
            f"{pricing_label(quote.pricing, lang)}")


def _line(line: QuoteLine, quote: Quote, lang: Lang) -> str:
    cur = quote.currency
    if line.kind == "term" and line.term is not None:
        unit = _TERM_UNITS[line.term]
        return t("quote_line_term", lang, periods=format_amount(Decimal(line.periods), unit, lang),
                 hours=line.hours // line.periods, discount=number(line.discount_percent.normalize(), lang),
                 count=quote.gpu_count,
                 unit_price=money(line.unit_price, cur, lang), n=line.periods,
                 amount=money(line.amount, cur, lang))
    return t("quote_line_hours", lang, label=pricing_label(line.kind, lang), count=quote.gpu_count,
             hours=line.hours, quantity=number(line.quantity, lang), unit_price=money(line.unit_price, cur, lang),
             amount=money(line.amount, cur, lang))


def render_quote(quote: Quote, lang: Lang, markup: Markup = PLAIN, *, quote_id: str | None = None,
                 replayed: bool = False) -> str:
    e, bold = markup.text, markup.bold
    title = t("quote_title", lang, quote_id=quote_id) if quote_id else t("quote_preview_title", lang)
    parts = [bold(title)]
    if replayed:
        parts.append(e(t("quote_replayed", lang, issued=_stamp(quote.issued_at))))
    parts.append(e(summary(quote, lang)))
    parts.extend("• " + e(_line(line, quote, lang)) for line in quote.lines)
    parts.append(bold(t("quote_total", lang, total=money(quote.total, quote.currency, lang))))
    parts.extend(e(line) for line in render_options(quote, lang))
    parts.extend(e(line) for line in _terms(quote, lang))
    parts.extend("ℹ " + e(t(f"quote_rule_{rule}", lang)) for rule in quote.rules)
    return "\n".join(parts)


def _line_cells(line: QuoteLine, quote: Quote, lang: Lang) -> tuple[str, str, str, str]:
    cur = quote.currency
    if line.kind == "term" and line.term is not None:
        label = t("rich_quote_term", lang, periods=format_amount(Decimal(line.periods), _TERM_UNITS[line.term], lang),
                  discount=number(line.discount_percent.normalize(), lang))
        quantity = f"{quote.gpu_count} × {line.periods}"
    else:
        label = pricing_label(line.kind, lang)
        quantity = number(line.quantity, lang)
    return label, quantity, money(line.unit_price, cur, lang), money(line.amount, cur, lang)


def quote_report(quote: Quote, lang: Lang, *, quote_id: str | None = None, replayed: bool = False) -> Report:
    """The quote as tables: its lines with the total, then the ways to pay compared; the same words as
    :func:`render_quote` around them."""
    title = t("quote_title", lang, quote_id=quote_id) if quote_id else t("quote_preview_title", lang)
    blocks: list[Text | Table] = []
    if replayed:
        blocks.append(Text(t("quote_replayed", lang, issued=_stamp(quote.issued_at))))
    blocks.append(Text(summary(quote, lang), bold=True))
    blocks.append(Table(
        headers=(t("rich_quote_item", lang), t("rich_quote_hours", lang), t("rich_quote_unit_price", lang),
                 t("rich_quote_amount", lang)),
        rows=tuple(_line_cells(line, quote, lang) for line in quote.lines),
        align=("left", "right", "right", "right"),
        total=(t("rich_quote_total", lang), "", "", money(quote.total, quote.currency, lang))))
    if quote.options:
        own = quote.options[0].total  # the request's own way to pay comes first
        rows = []
        for option in quote.options:
            mark = ""
            mark = _option_mark(option, own, quote.currency, lang, quote.options).strip(" ←")
            rows.append((pricing_label(option.pricing, lang), number(Decimal(option.billable_hours), lang),
                         money(option.total, quote.currency, lang), mark))
        blocks.append(Table(headers=(t("rich_quote_pricing", lang), t("rich_quote_hours", lang),
                                     t("rich_quote_amount", lang), ""),
                            rows=tuple(rows), align=("left", "right", "right", "left"),
                            caption=t("quote_options_title", lang)))
        blocks.extend(Text(hint, note=True) for hint in _option_hints(quote, lang))
    blocks.extend(Text(line) for line in _terms(quote, lang))
    blocks.extend(Text("ℹ " + t(f"quote_rule_{rule}", lang), note=True) for rule in quote.rules)
    return Report(title=title, blocks=tuple(blocks))


def issued_report(issued: IssuedQuote, lang: Lang) -> Report:
    return quote_report(issued.quote, lang, quote_id=issued.quote_id, replayed=issued.replayed)


def _option_mark(option: QuoteOption, own: Decimal, currency: str, lang: Lang,
                 options: Sequence[QuoteOption]) -> str:
    """"← cheapest, saves …" on the cheapest way that runs to the end ("without interruptions" when a spot line
    below costs less, so that the mark does not sit on a higher number unexplained); what spot saves, if not
    interrupted."""
    saving = own - option.total
    if option.cheapest:
        qualified = any(other.pricing == "spot" and other.total < option.total for other in options)
        suffix = "_uninterrupted" if qualified else ""
        return (t(f"quote_option_saving{suffix}", lang, saving=money(saving, currency, lang)) if saving
                else t(f"quote_option_cheapest{suffix}", lang))
    if option.pricing == "spot" and saving > 0:
        return t("quote_option_spot_saving", lang, saving=money(saving, currency, lang))
    return ""


def _option_hints(quote: Quote, lang: Lang) -> list[str]:
    """How to quote the cheaper ways the options list: each is a request of its own."""
    listed = {option.pricing for option in quote.options[1:]}
    return [t(f"quote_options_hint_{pricing.replace('-', '_')}", lang)
            for pricing in ("committed", "spot", "on-demand") if pricing in listed]


def render_options(quote: Quote, lang: Lang) -> list[str]:
    """The request's own way to pay and the cheaper ones, the cheapest marked with what it saves (empty when
    the request's own way costs least)."""
    if not quote.options:
        return []
    own = quote.options[0].total
    lines = [t("quote_options_title", lang)]
    for option in quote.options:
        mark = _option_mark(option, own, quote.currency, lang, quote.options)
        lines.append("• " + t("quote_option_line", lang, pricing=pricing_label(option.pricing, lang),
                              hours=number(Decimal(option.billable_hours), lang),
                              total=money(option.total, quote.currency, lang)) + mark)
    lines.extend(_option_hints(quote, lang))
    return lines


def render_issued(issued: IssuedQuote, lang: Lang, markup: Markup = PLAIN) -> str:
    return render_quote(issued.quote, lang, markup, quote_id=issued.quote_id, replayed=issued.replayed)


def render_input_error(exc: QuoteInputError, lang: Lang, markup: Markup = PLAIN) -> str:
    e = markup.text
    params = {"suggestions": ", ".join(exc.suggestions) or "—", "detail": str(exc), **exc.params}
    key = f"quote_err_{exc.code}"
    try:
        text = t(key, lang, **params)
    except KeyError:
        text = t("quote_err_invalid", lang, detail=str(exc))
    return e(text)


def render_conflict(exc: IdempotencyConflictError, lang: Lang, markup: Markup = PLAIN, *,
                    edited: bool = False) -> str:
    e = markup.text
    original = exc.original
    about = summary(original.quote, lang)
    if edited:
        return e(t("quote_conflict_edited", lang, quote_id=original.quote_id, summary=about))
    return e(t("quote_conflict", lang, idem_key=exc.key, quote_id=original.quote_id, summary=about))


def render_recent(quotes: Sequence[IssuedQuote], lang: Lang, markup: Markup = PLAIN) -> str:
    e = markup.text
    if not quotes:
        return e(t("quotes_empty", lang))
    lines = [markup.bold(t("quotes_title", lang))]
    for issued in quotes:
        quote = issued.quote
        head = markup.code(issued.quote_id)
        lines.append(f"• {head} {e(_stamp(quote.issued_at))} — {e(summary(quote, lang))} — "
                     f"{e(money(quote.total, quote.currency, lang))}")
    return "\n".join(lines)
