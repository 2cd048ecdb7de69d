"""Operator storage: votes on answers, the gap log and the reports read from them (``anchorgpu report``, /report)."""
