"""Offline programs for maintainers (run by hand or by `make test`); never imported by the running product."""
