"""A request-rate limit for an LLM endpoint, shared by every worker through Redis (Django-free).

Both limiters implement GCRA (a token bucket kept as one "theoretical arrival time"): at most
`burst` requests at once, then one every 60 / `requests_per_minute` seconds. Without a Redis URL
the limit holds within the process only.
"""

import logging
from abc import ABC, abstractmethod
import threading
import time
from functools import cache

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

logger = logging.getLogger(__name__)

# Returns 0 when the request may go now, else how many milliseconds to wait.
_GCRA = """
local emission = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
if now < tat - tolerance then return math.ceil(tat - tolerance - now) end
local next_tat = tat + emission
redis.call('SET', KEYS[1], string.format('%.0f', next_tat), 'PX', math.ceil(next_tat - now + tolerance) + 1000)
return 0
"""


class RateLimiter(ABC):
    @abstractmethod
    def wait_time(self) -> float:
        """Seconds to wait before the next request may go; 0 reserves a slot now."""

    def acquire(self) -> None:
        while wait := self.wait_time():
            time.sleep(wait)


class LocalRateLimiter(RateLimiter):
    def __init__(self, requests_per_minute: float, burst: int = 1):
        self.emission = 60.0 / requests_per_minute
        self.tolerance = self.emission * max(burst - 1, 0)
        self._tat = 0.0
        self._lock = threading.Lock()

    def wait_time(self) -> float:
        with self._lock:
            now = time.monotonic()
            tat = max(self._tat, now)
            if now < tat - self.tolerance:
                return tat - self.tolerance - now
            self._tat = tat + self.emission
            return 0.0


class RedisRateLimiter(RateLimiter):
    """The same limit across processes and machines.

    When Redis fails, this process limits itself alone for RETRY_REDIS_AFTER seconds, then tries
    Redis again, so that an outage slows no request down.
    """

    RETRY_REDIS_AFTER = 30.0

    def __init__(self, client: redis.Redis, key: str, requests_per_minute: float, burst: int = 1):
        self.key = key
        self.emission_ms = 60_000.0 / requests_per_minute
        self.tolerance_ms = self.emission_ms * max(burst - 1, 0)
        self._script = client.register_script(_GCRA)
        self._fallback = LocalRateLimiter(requests_per_minute, burst)
        self._redis_down_until = 0.0

    def wait_time(self) -> float:
        if time.monotonic() >= self._redis_down_until:
            try:
                return int(self._script(keys=[self.key], args=[self.emission_ms, self.tolerance_ms])) / 1000
            except redis.RedisError as error:
                logger.warning("judge rate limit: Redis unavailable (%s); limiting this process only", error)
                self._redis_down_until = time.monotonic() + self.RETRY_REDIS_AFTER
        return self._fallback.wait_time()


@cache
def shared_rate_limiter(name: str, requests_per_minute: float, burst: int, redis_url: str):
    """The one limiter of this process for an endpoint; None when there is no limit."""
    if requests_per_minute <= 0:
        return None
    if redis_url:
        client = redis.Redis.from_url(
            redis_url, socket_timeout=2, socket_connect_timeout=2, retry=Retry(NoBackoff(), retries=1)
        )
        return RedisRateLimiter(client, f"trajscope:judge-rate:{name}", requests_per_minute, burst)
    return LocalRateLimiter(requests_per_minute, burst)
