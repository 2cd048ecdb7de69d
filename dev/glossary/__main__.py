"""`python -m dev.glossary [--check]`: regenerate data/glossary/entries.yaml, or check that it is current."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dev.diffs import difference
from dev.glossary.curation import ANNOTATIONS, CurationError, build_entries, render

REPO_ROOT = Path(__file__).resolve().parents[2]
GLOSSARY_DIR = REPO_ROOT / "data" / "glossary"




def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dev.glossary", description=__doc__)
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 and show the difference if entries.yaml is out of date")
    parser.add_argument("--glossary-dir", type=Path, default=GLOSSARY_DIR,
                        help="folder holding sources/ and entries.yaml (default: %(default)s)")
    parser.add_argument("--annotations", type=Path, default=ANNOTATIONS,
                        help="the curator's annotations (default: %(default)s)")
    args = parser.parse_args(argv)
    target = args.glossary_dir / "entries.yaml"
    try:
        entries, notes = build_entries(args.glossary_dir / "sources", args.annotations)
    except (CurationError, OSError, ValueError) as exc:
        print(f"glossary: {exc}", file=sys.stderr)
        return 2
    text = render(entries, notes)
    if args.check:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != text:
            print(f"glossary: {target} is not what the sources and annotations generate "
                  f"(run `python -m dev.glossary` to regenerate it):", file=sys.stderr)
            for line in difference(current, text, target.name):
                print(line, file=sys.stderr)
            return 1
        print(f"glossary: {target} is up to date ({len(entries)} entries)")
        return 0
    target.write_text(text, encoding="utf-8")
    print(f"glossary: wrote {len(entries)} entries to {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
