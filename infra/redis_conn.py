"""Redis clients for state the bot can do without for a while, and the bookkeeping of one outage.

Every user of Redis here (update claims, FSM, conversation history, shared rate limits) has a fallback, so a
Redis that is gone must cost each update a refused connection at most, never seconds: the clients fail fast
(short socket timeouts, no hidden retry with backoff) and the caller switches to its fallback. An
:class:`Outage` then says, for ``retry_s``, not to try Redis at all (a host that drops packets would
otherwise cost the whole connect timeout on every update), and logs the outage once when it starts and once
when it ends instead of once per update.

Recovery needs no restart: redis-py drops a connection that failed, checks an idle pooled one before use
(a connection to the killed server reads as closed and is replaced) and connects again once the server is
back; the fault suite kills and restarts a Redis under a running bot to prove it.
"""

from __future__ import annotations

import logging
import time

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

# What a Redis that is down, restarting or unreachable raises (redis-py wraps most socket errors in its
# ConnectionError/TimeoutError; OSError covers the rest).
REDIS_DOWN_ERRORS: tuple[type[BaseException], ...] = (RedisError, OSError, TimeoutError)


def fail_fast_redis(url: str, *, timeout_s: float = 2.0, connect_timeout_s: float = 1.0,
                    decode_responses: bool = False) -> Redis:
    """A client whose commands fail within ``timeout_s`` when Redis is gone, without retrying.

    No retry on purpose: a retried ``SET … NX`` whose first attempt did land reads as "someone else holds
    it", and a claim taken that way would be lost; the callers' fallbacks handle a failure instead.
    """
    client: Redis = Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=connect_timeout_s,
                                   retry=Retry(NoBackoff(), 0), decode_responses=decode_responses)
    return client


class Outage:
    """One dependency's availability as seen by one user of it.

    ``skip()`` is true for ``retry_s`` after a failure (use the fallback without trying); the first failure
    of an outage and the first success after it are logged as one warning each.
    """

    def __init__(self, what: str, fallback: str, log: logging.Logger, retry_s: float = 1.0) -> None:
        self.what = what
        self.fallback = fallback
        self.log = log
        self.retry_s = retry_s
        self.down = False
        self.since = 0.0
        self._retry_at = 0.0

    def skip(self) -> bool:
        return self.down and time.monotonic() < self._retry_at

    def failed(self, exc: BaseException) -> None:
        now = time.monotonic()
        self._retry_at = now + self.retry_s
        if not self.down:
            self.down, self.since = True, now
            self.log.warning("%s: Redis unavailable (%s: %s); %s until it is back", self.what,
                             type(exc).__name__, exc, self.fallback)

    def succeeded(self) -> None:
        if self.down:
            self.down = False
            self.log.warning("%s: Redis is back after %.1f s", self.what, time.monotonic() - self.since)
