"""Fixtures: the NetworkPolicy controller running in-process against the real apiserver."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kuberay.kube import Client
from tests.integration import operator_harness as harness
from tests.integration.operator_harness import Operator


def start_netpol_operator(
    client: Client, namespace: str
) -> contextlib.AbstractAsyncContextManager[Operator]:
    """The NetworkPolicy controller alone (it needs no pods), scoped to ``namespace``."""
    return harness.start_operator(client, namespace, kinds=("networkpolicy",))


@pytest.fixture
async def netpol_operator(
    crds_installed: None, kclient: Client, namespace: str
) -> AsyncIterator[Any]:
    async with start_netpol_operator(kclient, namespace) as op:
        yield op
