# The two commands of the README. Each sets everything up first (idempotent, fast when done).
.PHONY: setup run test test-fast lint bench

setup:
	@scripts/setup.sh

run: setup
	@.venv/bin/anchorgpu run

test: setup
	@scripts/test.sh

# The loop while editing: the same checks, and the tests that need no bot process, no pseudo-terminal and
# no fault injection, on two pytest workers (the whole suite stays `make test`, serial, which CI runs).
test-fast: setup
	@scripts/test.sh --fast

lint: setup
	@.venv/bin/ruff check .
	@.venv/bin/mypy
