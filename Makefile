# The two commands of the README. Each sets everything up first (idempotent, fast when done).
.PHONY: setup run test lint bench

setup:
	@scripts/setup.sh

run: setup
	@.venv/bin/anchorgpu run

test: setup
	@scripts/test.sh

lint: setup
	@.venv/bin/ruff check .
	@.venv/bin/mypy
