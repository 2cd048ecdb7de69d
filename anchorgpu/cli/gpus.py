"""`anchorgpu gpus [--json]`: the GPU catalog with the current example prices."""

from __future__ import annotations

import argparse
import sys

from anchorgpu.cli._common import print_json
from anchorgpu.settings import get_settings


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("gpus", help="list the GPU catalog with prices")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from gpu.catalog import load_gpu_catalog
    from gpu.quote.prices import PriceListError, load_price_list
    from gpu.quote.service import gpus_with_prices

    data_dir = get_settings().data.data_dir
    catalog = load_gpu_catalog(data_dir)
    try:
        prices = load_price_list(data_dir, set(catalog.ids()))
    except PriceListError as exc:
        print(f"anchorgpu gpus: {exc}", file=sys.stderr)
        return 1
    document = gpus_with_prices(catalog, prices)
    if args.json:
        print_json(document)
        return 0
    cur = document["currency"]
    print(f"Price list {document['price_list_version']} ({cur}, effective {document['effective_date']}"
          f"{', EXAMPLE prices' if document['example_prices'] else ''})")
    print(f"{'id':<14} {'name':<32} {'GB':>5} {'on-demand/h':>12} {'spot/h':>8} {'month/GPU':>10}")
    for row in document["gpus"]:
        month = row["terms"]["month"]["price_per_gpu"] if row["terms"] else "-"
        print(f"{row['id']:<14} {row['name']:<32} {row['memory_gb']:>5g} {row['on_demand_hourly'] or '-':>12} "
              f"{row['spot_hourly'] or '-':>8} {month:>10}")
    print("A week is 7 days, a month 30 days; committed terms are paid in full. Quote: anchorgpu quote \"h100 x8 "
          "2 weeks\"")
    return 0
