"""The price list file (data/prices.yaml) through its pydantic model: a broken edit is refused with one
message naming the file, the line and the field."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from gpu.prices import PriceListError, Term, load_price_list, read_price_list
from tests.conftest import DATA_DIR

SHIPPED = (DATA_DIR / "prices.yaml").read_text(encoding="utf-8")


def line_of(text: str, needle: str) -> int:
    return text.splitlines().index(needle) + 1


def test_the_shipped_list_reads_as_before() -> None:
    prices = load_price_list(DATA_DIR)
    assert prices.currency == "USD" and prices.minor_units == 2 and prices.example
    mi300x = prices.gpus["mi300x"]
    assert mi300x.spot is None and mi300x.term_discount_percent[Term.MONTH] == Decimal("30")
    assert mi300x.term_discount_percent[Term.DAY] == Decimal("5")  # the default where not overridden
    assert mi300x.term_price[Term.MONTH] == Decimal("1254.96")  # 720 x 2.49 x 0.70, half up


@pytest.mark.parametrize(("old", "new", "field", "what"), [
    ('    spot: "0.29"', '    spot: "0.99"', "gpus.l4.spot", "not above on_demand"),
    ('    on_demand: "0.75"', '    on_demand: "-1"', "gpus.a10.on_demand", "must be positive"),
    ('    on_demand: "0.75"', '    on_demand: "cheap"', "gpus.a10.on_demand", "expected a decimal number"),
    ('    spot: "1.59"', '    spt: "1.59"', "gpus.h100-pcie.spt", "unknown field"),
    ('  month: "25"', '  month: "100"', "term_discount_percent.month", "below 100 percent"),
    ('  month: "25"', '  mnth: "25"', "term_discount_percent.mnth (key)", "'month'"),
    ("currency: USD", "currency: US", "currency", "ISO 4217"),
    ("effective_date: 2026-11-01", "effective_date: soon", "effective_date", "a date like"),
])
def test_a_broken_price_file_names_the_file_the_line_and_the_field(tmp_path: Path, old: str, new: str,
                                                                   field: str, what: str) -> None:
    path = tmp_path / "prices.yaml"
    text = SHIPPED.replace(old, new, 1)
    assert text != SHIPPED
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PriceListError) as caught:
        read_price_list(path)
    message = str(caught.value)
    assert message.startswith(f"{path}, line {line_of(text, new.splitlines()[0])}: {field}: "), message
    assert what in message and ";" not in message


def test_a_missing_field_and_an_unknown_gpu_point_at_their_place(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text(SHIPPED.replace('version: "2026-11-01.example-1"\n', ""), encoding="utf-8")
    with pytest.raises(PriceListError, match=rf"^{path}, line \d+: version: required"):
        read_price_list(path)
    path.write_text(SHIPPED, encoding="utf-8")
    known = set(load_price_list(DATA_DIR).gpus) - {"l4"}
    with pytest.raises(PriceListError) as caught:
        read_price_list(path, known)
    assert str(caught.value) == f"{path}, line {line_of(SHIPPED, '  l4:')}: gpus.l4: ids not in the GPU catalog: l4"


def test_not_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "prices.yaml"
    path.write_text("version: x\ngpus: [this is not\n", encoding="utf-8")
    with pytest.raises(PriceListError, match=rf"^{path}, line \d+: not valid YAML"):
        read_price_list(path)
    with pytest.raises(PriceListError, match="price list not found"):
        read_price_list(tmp_path / "missing.yaml")
