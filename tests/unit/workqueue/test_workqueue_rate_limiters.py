"""Exact delays of the rate limiters."""

from __future__ import annotations

import pytest

from kuberay.workqueue import (
    BucketRateLimiter,
    FakeClock,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    default_controller_rate_limiter,
)


def test_exponential_doubles_per_failure_and_caps() -> None:
    limiter = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    delays = [limiter.when("a") for _ in range(20)]
    assert delays[:4] == pytest.approx([0.005, 0.010, 0.020, 0.040])
    assert delays[17] == pytest.approx(655.36)  # the 18th requeue
    assert delays[18] == 1000.0
    assert delays[19] == 1000.0
    assert limiter.num_requeues("a") == 20


def test_exponential_is_per_item_and_forget_resets() -> None:
    limiter = ItemExponentialFailureRateLimiter(1.0, 60.0)
    assert limiter.when("a") == 1.0
    assert limiter.when("a") == 2.0
    assert limiter.when("b") == 1.0
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 1.0
    assert limiter.num_requeues("b") == 1


def test_exponential_never_overflows() -> None:
    limiter = ItemExponentialFailureRateLimiter(1e300, 5.0)
    for _ in range(3000):
        assert limiter.when("a") == 5.0


def test_exponential_rejects_negative_delays() -> None:
    with pytest.raises(ValueError):
        ItemExponentialFailureRateLimiter(-1.0, 1.0)


def test_bucket_burst_then_one_token_per_interval() -> None:
    clock = FakeClock()
    limiter = BucketRateLimiter(10.0, 100, clock=clock)
    assert [limiter.when(i) for i in range(100)] == [0.0] * 100
    assert limiter.when("x") == pytest.approx(0.1)
    assert limiter.when("y") == pytest.approx(0.2)
    assert limiter.num_requeues("x") == 0


def test_bucket_refills_over_time_up_to_burst() -> None:
    clock = FakeClock()
    limiter = BucketRateLimiter(10.0, 2, clock=clock)
    assert [limiter.when("a") for _ in range(3)] == pytest.approx([0.0, 0.0, 0.1])
    clock.advance(0.1)  # pays back the debt
    assert limiter.when("a") == pytest.approx(0.1)
    clock.advance(3600)  # refills only up to burst
    assert [limiter.when("a") for _ in range(3)] == pytest.approx([0.0, 0.0, 0.1])


@pytest.mark.parametrize(("qps", "burst"), [(0.0, 1), (-1.0, 1), (1.0, 0)])
def test_bucket_rejects_bad_parameters(qps: float, burst: int) -> None:
    with pytest.raises(ValueError):
        BucketRateLimiter(qps, burst)


def test_max_of_takes_longest_delay_and_forgets_everywhere() -> None:
    fast = ItemExponentialFailureRateLimiter(0.001, 1.0)
    slow = ItemExponentialFailureRateLimiter(0.1, 10.0)
    limiter = MaxOfRateLimiter(fast, slow)
    assert limiter.when("a") == 0.1
    assert limiter.when("a") == 0.2
    assert limiter.num_requeues("a") == 2
    limiter.forget("a")
    assert fast.num_requeues("a") == 0
    assert slow.num_requeues("a") == 0


def test_max_of_requires_a_limiter() -> None:
    with pytest.raises(ValueError):
        MaxOfRateLimiter[str]()


def test_default_controller_rate_limiter() -> None:
    clock = FakeClock()
    limiter = default_controller_rate_limiter(clock=clock)
    assert [limiter.when("a") for _ in range(3)] == pytest.approx([0.005, 0.01, 0.02])
    # Spend the rest of the burst on other items; the bucket then dominates.
    for i in range(97):
        assert limiter.when(i) == 0.005
    assert limiter.when("fresh") == pytest.approx(0.1)
    assert limiter.num_requeues("a") == 3
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
