"""Rental quotes: price list, duration and request parsing, the pure engine, the idempotent store."""
