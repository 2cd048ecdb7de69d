#!/usr/bin/env bash
# The README's test command after set-up: lint, type-check, the import layers, the generated glossary (its
# entries must be what the seeds and annotations give), then the whole test suite on real components (SQLite,
# PostgreSQL, Redis, Chroma, llama.cpp on the small model, the bot against the local Bot API stub).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False

scripts/services.sh

echo "[test] ruff"
.venv/bin/ruff check .
echo "[test] mypy"
.venv/bin/mypy
echo "[test] import layers"
.venv/bin/lint-imports
echo "[test] glossary entries match their sources and annotations"
.venv/bin/python -m tools.glossary --check
echo "[test] pytest"
.venv/bin/pytest -q -p no:cacheprovider "$@"
