"""The cache is optional: a Redis cache that cannot be reached answers as an empty cache.

What the cache holds can be computed again (reports, plots) or is a rate limit's count, so while Redis is
down reads are computed, rate limits let requests through, and nothing answers 500. Each failed operation
is counted (`trajscope_cache_errors_total{operation}` at /metrics) and the outage is logged, once a minute
per process at most. Connections give up within a second instead of retrying with backoff, so a cache that
is down costs a request that second, not more.
"""

import logging
import threading
import time

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from infrastructure import counters

log = logging.getLogger("infrastructure.cache")

OUTAGES = (RedisConnectionError, RedisTimeoutError)
CONNECT_SECONDS = 1.0
LOG_INTERVAL_SECONDS = 60.0


class OptionalRedisCache(RedisCache):
    def __init__(self, server, params):
        options = params.setdefault("OPTIONS", {})
        options.setdefault("socket_connect_timeout", CONNECT_SECONDS)
        options.setdefault("socket_timeout", CONNECT_SECONDS)
        options.setdefault("retry", Retry(NoBackoff(), 0))
        super().__init__(server, params)
        self._logged_at = None
        self._log_lock = threading.Lock()

    def _outage(self, operation: str, error: Exception) -> None:
        counters.count("cache_errors", operation=operation)
        now = time.monotonic()
        with self._log_lock:
            if self._logged_at is not None and now - self._logged_at < LOG_INTERVAL_SECONDS:
                return
            self._logged_at = now
        log.warning("the cache cannot be reached (%s: %s): pages are computed and API rate limits are off "
                    "until it is back", type(error).__name__, error)

    def _or(self, operation: str, fallback, call, *args):
        """`call(*args)`, or `fallback` when the cache cannot be reached."""
        try:
            return call(*args)
        except OUTAGES as error:
            self._outage(operation, error)
            return fallback

    def get(self, key, default=None, version=None):
        return self._or("get", default, super().get, key, default, version)

    def get_many(self, keys, version=None):
        return self._or("get", {}, super().get_many, keys, version)

    def has_key(self, key, version=None):
        return self._or("get", False, super().has_key, key, version)

    def add(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._or("set", False, super().add, key, value, timeout, version)

    def set(self, key, value, timeout=DEFAULT_TIMEOUT, version=None):
        return self._or("set", None, super().set, key, value, timeout, version)

    def set_many(self, data, timeout=DEFAULT_TIMEOUT, version=None):
        return self._or("set", list(data), super().set_many, data, timeout, version)

    def touch(self, key, timeout=DEFAULT_TIMEOUT, version=None):
        return self._or("set", False, super().touch, key, timeout, version)

    def delete(self, key, version=None):
        return self._or("delete", False, super().delete, key, version)

    def delete_many(self, keys, version=None):
        return self._or("delete", None, super().delete_many, keys, version)
