#!/usr/bin/env bash
# The README's test command after set-up: lint, type-check, the import layers, the generated glossary (its
# entries must be what the seeds and annotations give), then the whole test suite on real components (SQLite,
# PostgreSQL, Redis, Chroma, llama.cpp on the small model, the bot against the local Bot API stub).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False
# Compiled modules (and pytest's rewritten test modules) are kept between runs, outside the source tree: a
# machine that sets PYTHONDONTWRITEBYTECODE would otherwise recompile all of them on every run (~4 s).
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX="$ROOT/var/pycache"

scripts/services.sh

echo "[test] ruff"
.venv/bin/ruff check .
echo "[test] mypy"
.venv/bin/mypy
echo "[test] import layers"
.venv/bin/lint-imports
echo "[test] glossary entries match their sources and annotations"
.venv/bin/python -m dev.glossary --check
echo "[test] pytest"
if [[ "${1:-}" == "--fast" ]]; then
  shift
  # the slow parts: bot processes against the stub (e2e, faults, scale, hostile), property-based fuzzing,
  # the labelled-set evaluations, and the console driven through a pseudo-terminal
  set -- -n 2 --ignore=tests/e2e --ignore=tests/faults --ignore=tests/scale --ignore=tests/hostile \
    --ignore=tests/fuzz --ignore=tests/eval --ignore=tests/anchorgpu/test_console_terminal.py -m "not long" "$@"
fi
.venv/bin/pytest -q -p no:cacheprovider "$@"
