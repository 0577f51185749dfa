import time

import redis

from judges.ratelimit import LocalRateLimiter, RedisRateLimiter, shared_rate_limiter


def _elapsed(limiter, requests: int) -> float:
    started = time.monotonic()
    for _ in range(requests):
        limiter.acquire()
    return time.monotonic() - started


def test_local_limit_allows_a_burst_then_spaces_requests():
    limiter = LocalRateLimiter(requests_per_minute=1200, burst=3)  # one every 50 ms
    assert [limiter.wait_time() == 0 for _ in range(4)] == [True, True, True, False]
    assert _elapsed(LocalRateLimiter(1200, burst=1), 5) >= 0.2


def test_no_limit_without_a_rate():
    assert shared_rate_limiter("endpoint", 0, 1, "") is None
    assert isinstance(shared_rate_limiter("endpoint", 60, 1, ""), LocalRateLimiter)


def test_workers_share_the_redis_limit(redis_url):
    # Two limiters on one key stand for two worker processes.
    first = RedisRateLimiter(redis.Redis.from_url(redis_url), "test:shared", requests_per_minute=600, burst=2)
    second = RedisRateLimiter(redis.Redis.from_url(redis_url), "test:shared", requests_per_minute=600, burst=2)
    assert first.wait_time() == 0 and second.wait_time() == 0
    assert first.wait_time() > 0 and second.wait_time() > 0  # the burst of 2 is used up by both together
    started = time.monotonic()
    for limiter in (first, second, first, second):
        limiter.acquire()
    assert time.monotonic() - started >= 0.3  # one request every 100 ms across both


def test_an_unreachable_redis_falls_back_to_the_process_limit():
    limiter = shared_rate_limiter("down", 60, 1, "redis://127.0.0.1:1/0")
    started = time.monotonic()
    assert limiter.wait_time() == 0
    assert limiter.wait_time() > 0  # the process's own limit, without asking Redis again
    assert time.monotonic() - started < 1
