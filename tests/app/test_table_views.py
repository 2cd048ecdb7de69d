"""The table data the views expose for rich replies: the same numbers and words as their HTML, headers in the
user's language, every row as wide as its header."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from app.views.fit import fit_report
from app.views.fit import render as render_fit
from app.views.gpus import gpus_report
from app.views.placements import placements_report
from app.views.quote import quote_report
from app.views.table import Table, Text
from gpu.catalog import load_gpu_catalog
from gpu.placements.engine import from_quote
from gpu.prices import load_price_list
from gpu.quote.engine import compute_quote
from gpu.quote.request import parse_quote_text
from tests.conftest import DATA_DIR, fit_service, gpu_data

CATALOG = load_gpu_catalog(DATA_DIR)
PRICES = load_price_list(DATA_DIR, known_gpu_ids=set(CATALOG.ids()))
NOW = dt.datetime(2026, 12, 1, 12, tzinfo=dt.UTC)


def _quote(text: str):  # type: ignore[no-untyped-def]
    request = parse_quote_text(text, CATALOG).request
    return compute_quote(request, CATALOG.get(request.gpu_id).name, PRICES, NOW)


def test_fit_report_tables_add_up() -> None:
    service = fit_service()
    result = service.fit("llama-3.1-70b q4_k_m 2xH100 ctx=32k batch=4")
    report = fit_report(result, "en", currency=service.currency)
    memory, cheapest = report.tables()
    assert memory.headers == ("What takes memory", "GiB per GPU", "GiB in all")
    rows = dict((row[0], row[1:]) for row in memory.rows)
    assert rows["KV cache"] == ("20.00", "40.00")
    assert memory.total is not None and memory.total[0] == "total"
    parts = [Decimal(rows[name][0]) for name in rows if name not in ("usable", "headroom")]
    assert abs(sum(parts) - Decimal(memory.total[1])) <= Decimal("0.02")  # rounding of each part
    assert memory.align == ("left", "right", "right") and "2× NVIDIA H100" in (memory.caption or "")
    assert cheapest.headers[0] == "GPU" and all(row[3].endswith("USD/h") for row in cheapest.rows)
    assert isinstance(report.blocks[0], Text) and "Fits" in report.blocks[0].text
    assert report.title.startswith("Llama 3.1 70B")


def test_fit_report_in_russian_keeps_notes_and_suggestions() -> None:
    result = fit_service().fit("llama-3.1-70b fp16 1xRTX-4090")
    report = fit_report(result, "ru")
    memory = report.tables()[0]
    assert memory.headers[0] == "Что занимает память" and not result.fits
    texts = [block.text for block in report.blocks if isinstance(block, Text)]
    assert "❌ Не помещается" in texts and any(block.note for block in report.blocks if isinstance(block, Text))


def test_quote_report_lines_and_total_are_the_quote_s() -> None:
    quote = _quote("h100 x8 2 weeks")
    report = quote_report(quote, "en", quote_id="Q-TEST")
    lines, *options = report.tables()
    assert report.title.startswith("Quote Q-TEST") or "Q-TEST" in report.title
    assert lines.total is not None and lines.total[-1] == f"{format(quote.total, ',f')} USD"
    assert len(lines.rows) == len(quote.lines)
    if quote.options:
        [compared] = options
        assert len(compared.rows) == len(quote.options) and any(row[3] for row in compared.rows)


def test_quote_report_russian_money_format() -> None:
    report = quote_report(_quote("a100-80gb x2 3 days"), "ru")
    lines = report.tables()[0]
    assert lines.headers == ("Позиция", "Часы", "Цена", "Сумма")
    assert lines.total is not None and "," in lines.total[-1] and lines.total[0] == "Итого"


def test_gpus_report_lists_the_rentable_gpus_with_prices() -> None:
    data = gpu_data()
    [table] = gpus_report(data, "en").tables()
    assert [row[1] for row in table.rows] == list(data.prices.rentable_ids())
    assert table.headers[5] == "USD/h" and all(row[5] != "—" for row in table.rows)
    assert len(table.headers) <= 20


def test_placements_report_one_row_per_placement() -> None:
    placement = from_quote(_quote("h100 x8 1 week committed"), placement_id="P-1", owner="tg:1", quote_id="Q-1",
                           now=NOW)
    report = placements_report([placement], NOW, "en", note="shared by the chat")
    assert report is not None
    [table] = report.tables()
    assert table.rows[0][0] == "P-1" and "H100" in table.rows[0][2] and "× 8" in table.rows[0][2]
    assert isinstance(report.blocks[-1], Text) and report.blocks[-1].note
    assert placements_report([], NOW, "en") is None


def test_a_row_of_the_wrong_width_is_refused() -> None:
    try:
        Table(headers=("a", "b"), rows=(("1",),))
    except ValueError as exc:
        assert "1 cells" in str(exc)
    else:
        raise AssertionError("a short row was accepted")


def test_the_decode_speed_is_said_to_be_a_ceiling_real_decoding_is_slower() -> None:
    result = fit_service().fit("deepseek r1 on 8 h200")
    assert result.decode_tokens_per_s is not None  # a bound from bandwidth alone, far above what runs
    assert "real decoding is slower" in render_fit(result, "en")
    assert "на деле ниже" in render_fit(result, "ru")
