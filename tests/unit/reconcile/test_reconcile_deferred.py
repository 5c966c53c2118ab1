"""DeferredReconciler: the real reconciler is built on the first request, once, and a
failing build fails only that request."""

from __future__ import annotations

import pytest

from kuberay.reconcile import Request, Result
from kuberay.reconcile.deferred import DeferredReconciler


class Counting:
    def __init__(self) -> None:
        self.seen: list[Request] = []
        self.ctx = "the context"

    async def reconcile(self, request: Request) -> Result:
        self.seen.append(request)
        return Result(requeue_after=len(self.seen))


async def test_built_once_on_first_request_and_then_passes_every_request() -> None:
    builds: list[Counting] = []

    def build() -> Counting:
        builds.append(Counting())
        return builds[-1]

    deferred = DeferredReconciler(build)
    assert builds == [] and deferred.built is None
    first = await deferred.reconcile(Request("ns", "a"))
    second = await deferred.reconcile(Request("ns", "b"))
    assert len(builds) == 1 and deferred.built is builds[0]
    assert (first.requeue_after, second.requeue_after) == (1, 2)
    assert builds[0].seen == [Request("ns", "a"), Request("ns", "b")]
    assert deferred.ctx == "the context"  # other attributes are the real reconciler's


async def test_a_failed_build_fails_the_request_and_is_tried_again() -> None:
    attempts: list[int] = []

    def build() -> Counting:
        attempts.append(1)
        if len(attempts) == 1:
            raise ImportError("broken install")
        return Counting()

    deferred = DeferredReconciler(build)
    with pytest.raises(ImportError):
        await deferred.reconcile(Request("ns", "a"))
    assert deferred.built is None
    result = await deferred.reconcile(Request("ns", "a"))
    assert result.requeue_after == 1 and len(attempts) == 2
