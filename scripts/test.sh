#!/usr/bin/env bash
# The README's test command after set-up: lint, type-check, then the whole test suite on real components
# (SQLite, PostgreSQL, Redis, Chroma, llama.cpp on the small model, the bot against the local Bot API stub).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False

scripts/services.sh

echo "[test] ruff"
.venv/bin/ruff check .
echo "[test] mypy"
.venv/bin/mypy
echo "[test] pytest"
.venv/bin/pytest -q -p no:cacheprovider "$@"
