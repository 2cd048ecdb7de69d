"""`anchorgpu gpus [--json]`: the GPU catalog with the current example prices."""

from __future__ import annotations

import argparse
import sys

from anchorgpu.cli._common import print_json
from infra.settings import get_settings


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("gpus", help="list the GPU catalog with prices")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    # imported here, not at the top: `anchorgpu --help` and the other subcommands start without them
    from app.views.gpus import gpus_document
    from gpu.data import GpuData
    from gpu.prices import PriceListError

    try:
        document = gpus_document(GpuData(get_settings().data.data_dir))
    except (PriceListError, OSError, ValueError) as exc:
        print(f"anchorgpu gpus: {exc}", file=sys.stderr)
        return 1
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
