"""LRUCache: bounded, evicts the least recently used, a read refreshes an entry."""

from __future__ import annotations

from infra.lru import LRUCache


def test_the_least_recently_used_entry_goes_first() -> None:
    cache: LRUCache[str, int] = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recent
    cache.put("c", 3)
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3
    assert len(cache) == 2


def test_discard_and_clear() -> None:
    cache: LRUCache[str, int] = LRUCache(4)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.discard("a")
    cache.discard("missing")
    assert cache.get("a") is None and cache.get("b") == 2
    cache.clear()
    assert len(cache) == 0
