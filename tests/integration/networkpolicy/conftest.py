"""Fixtures: the NetworkPolicy controller running in-process against the real apiserver."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kuberay.controllers.networkpolicy import setup_networkpolicy_controller
from kuberay.kube import Client
from tests.integration.operator_harness import new_manager, running
from tests.integration.raycluster.conftest import Operator


@contextlib.asynccontextmanager
async def start_netpol_operator(client: Client, namespace: str) -> AsyncIterator[Operator]:
    """The NetworkPolicy controller alone (it needs no pods), scoped to ``namespace``."""
    mgr = new_manager(client, namespace)
    ctrl = setup_networkpolicy_controller(mgr)
    async with running(mgr) as task:
        yield Operator(mgr, ctrl, client, task)


@pytest.fixture
async def netpol_operator(
    crds_installed: None, kclient: Client, namespace: str
) -> AsyncIterator[Any]:
    async with start_netpol_operator(kclient, namespace) as op:
        yield op
