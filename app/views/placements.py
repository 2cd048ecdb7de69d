"""Simulated placements as text in Russian or English: Telegram HTML (escaped) or plain text."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from decimal import Decimal

from app.views.quote import money, pricing_label, render_input_error
from app.views.table import Report, Table, Text
from gpu.placements.engine import Placement, PlacementStateError
from gpu.placements.service import PlacementConflictError, PlacementResult
from gpu.placements.store import PlacementNotFoundError
from gpu.quote.request import QuoteInputError
from infra.i18n import Lang, has, t
from infra.markup import PLAIN, Markup


def _stamp(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M")


def status_label(placement: Placement, now: dt.datetime, lang: Lang) -> str:
    return t(f"placement_status_{placement.status(now)}", lang)


def _body(placement: Placement, now: dt.datetime, lang: Lang, markup: Markup) -> list[str]:
    e = markup.text
    cur = placement.currency
    parts = [e(t("placement_summary", lang, gpu=placement.gpu_name, count=placement.gpu_count,
                 pricing=pricing_label(placement.pricing, lang))),
             e(t("placement_started", lang, started=_stamp(placement.started_at)))]
    if placement.paid_until is not None:
        parts.append(e(t("placement_paid_until", lang, paid_until=_stamp(placement.paid_until),
                         total=money(placement.prepaid, cur, lang))))
    else:
        parts.append(e(t("placement_accrued", lang, hours=placement.accrued_hours(now), count=placement.gpu_count,
                         rate=money(placement.hourly_rate, cur, lang),
                         total=money(placement.total(now), cur, lang))))
    if placement.quote_id:
        parts.append(e(t("placement_from_quote", lang, quote_id=placement.quote_id)))
    return parts


def render_placement(placement: Placement, now: dt.datetime, lang: Lang, markup: Markup = PLAIN) -> str:
    title = t("placement_title", lang, placement_id=placement.id, status=status_label(placement, now, lang))
    return "\n".join([markup.bold(title), *_body(placement, now, lang, markup)])


def _outcome(result: PlacementResult, lang: Lang) -> str:
    placement, now = result.placement, result.as_of
    if result.operation == "rent":
        return t("placement_rented", lang)
    if result.operation == "stop":
        if not result.changed:
            return t("placement_already_stopped", lang)
        if placement.paid_until is not None:
            return t("placement_stopped_committed", lang, paid_until=_stamp(placement.paid_until))
        return t("placement_stopped_hourly", lang, hours=placement.accrued_hours(now))
    if result.operation == "start":
        return t("placement_started_again" if result.changed else "placement_already_running", lang)
    extension = result.extension or {}
    assert placement.paid_until is not None
    return t("placement_extended", lang, hours=extension.get("hours", "?"),
             total=money(Decimal(str(extension.get("total", "0"))), placement.currency, lang),
             paid_until=_stamp(placement.paid_until))


def render_result(result: PlacementResult, lang: Lang, markup: Markup = PLAIN) -> str:
    """The confirmation of rent / stop / start / extend (a stop states that the paid period goes on)."""
    parts = [markup.text(_outcome(result, lang))]
    if result.replayed:
        parts.append(markup.text(t("placement_replayed", lang, as_of=_stamp(result.as_of))))
    parts.append(render_placement(result.placement, result.as_of, lang, markup))
    return "\n".join(parts)


def render_placements(placements: Sequence[Placement], now: dt.datetime, lang: Lang,
                      markup: Markup = PLAIN) -> str:
    e = markup.text
    if not placements:
        return e(t("placements_empty", lang))
    lines = [markup.bold(t("placements_title", lang))]
    for placement in placements:
        cost = _cost(placement, now, lang)
        lines.append(f"• {markup.code(placement.id)} {e(status_label(placement, now, lang))} — "
                     f"{e(placement.gpu_name)} × {placement.gpu_count} · "
                     f"{e(pricing_label(placement.pricing, lang))} · {e(cost)}")
    return "\n".join(lines)


def _cost(placement: Placement, now: dt.datetime, lang: Lang) -> str:
    """What a placement costs: paid up to a date (fixed terms), or so far (hourly)."""
    if placement.paid_until is not None:
        return t("placement_paid_until", lang, paid_until=_stamp(placement.paid_until),
                 total=money(placement.prepaid, placement.currency, lang))
    return money(placement.total(now), placement.currency, lang)


def placements_report(placements: Sequence[Placement], now: dt.datetime, lang: Lang,
                      note: str | None = None) -> Report | None:
    """The list as a table (None when there is nothing to list: that is one sentence, not a table)."""
    if not placements:
        return None
    rows = []
    for placement in placements:
        cost = _cost(placement, now, lang)
        rows.append((placement.id, status_label(placement, now, lang),
                     f"{placement.gpu_name} × {placement.gpu_count}", pricing_label(placement.pricing, lang), cost))
    table = Table(headers=(t("rich_placements_id", lang), t("rich_placements_status", lang),
                           t("rich_placements_gpus", lang), t("rich_placements_pricing", lang),
                           t("rich_placements_cost", lang)),
                  rows=tuple(rows), align=("left", "left", "left", "left", "right"))
    blocks: tuple[Text | Table, ...] = (table,) if note is None else (table, Text(note, note=True))
    return Report(title=t("placements_title", lang), blocks=blocks)


def render_placement_error(exc: Exception, lang: Lang, markup: Markup = PLAIN) -> str:
    """Any refusal of the placement service, in the user's language (never a traceback)."""
    e = markup.text
    if isinstance(exc, PlacementNotFoundError):
        is_quote = exc.placement_id.startswith("Q-")
        return e(t("placement_err_quote_not_found" if is_quote else "placement_err_not_found", lang,
                   **{"quote_id" if is_quote else "placement_id": exc.placement_id}))
    if isinstance(exc, PlacementConflictError):
        return e(t("placement_conflict", lang, idem_key=exc.key, operation=exc.operation,
                   placement_id=exc.placement_id))
    if isinstance(exc, PlacementStateError | QuoteInputError):
        key = f"placement_err_{exc.code}"
        if has(key):
            params = {k: _stamp(v) if isinstance(v, dt.datetime) else v for k, v in exc.params.items()}
            return e(t(key, lang, **params))
        if isinstance(exc, QuoteInputError):
            return render_input_error(exc, lang, markup)
    return e(str(exc))

