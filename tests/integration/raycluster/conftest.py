"""Fixtures: the RayCluster controller running in-process against the real apiserver."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kuberay.kube import Client
from tests.integration import operator_harness as harness
from tests.integration.operator_harness import Operator

__all__ = ["Operator", "start_operator"]


def start_operator(
    client: Client,
    namespace: str,
    *,
    gates: str = "",
    env: dict[str, str] | None = None,
    registry: Any = None,
    **settings: Any,
) -> contextlib.AbstractAsyncContextManager[Operator]:
    """The RayCluster controller alone; ``settings`` go to it."""
    return harness.start_operator(
        client, namespace, gates=gates, env=env, registry=registry, raycluster=settings
    )


@pytest.fixture
async def operator(
    crds_installed: None, kclient: Client, namespace: str
) -> AsyncIterator[Operator]:
    async with start_operator(kclient, namespace) as op:
        yield op
