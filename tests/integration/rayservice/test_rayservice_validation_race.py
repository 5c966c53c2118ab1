"""Concurrent reconciles of different RayServices share one reconciler: what one RayService's
validation decided must not be read back by another (issue 26, item 7)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kuberay.controllers.rayservice import reconciler as rayservice_reconciler
from kuberay.controllers.rayservice.gateway_builder import GATEWAY_API_VERSION
from kuberay.kube import Client, NotFound
from tests.integration.rayservice.conftest import ServiceOperator
from tests.integration.rayservice.helpers import cond, pending_name, rayservice, wait_rs
from tests.integration.rayservice.incremental_helpers import incremental_rayservice


def _validation_failed(obj: dict[str, Any]) -> bool:
    return (cond(obj, "Ready") or {}).get("reason") == "ValidationFailed"


async def test_a_rayservice_waiting_for_the_gateway_api_is_rechecked_whatever_others_do(
    service_operator: ServiceOperator,
    kclient: Client,
    namespace: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``a`` (incremental strategy) fails validation while the Gateway API CRDs are missing;
    while its status write is in flight, the other worker reconciles the valid ``b``. Once the
    CRDs are served, ``a`` must be reconciled past validation (a pending cluster named; the
    operator watches no CRDs, only its recheck can notice)."""
    monkeypatch.setattr(rayservice_reconciler, "GATEWAY_API_RECHECK_SECONDS", 1.0)
    client: Any = service_operator.client
    installed = asyncio.Event()
    b_status_written = asyncio.Event()
    original_resource = client.resource
    original_update_status = client.update_status

    async def resource(api_version: str, kind: str) -> Any:
        if api_version == GATEWAY_API_VERSION and not installed.is_set():
            raise NotFound(404, "NotFound", f"the server has no resource for kind {kind}")
        return await original_resource(api_version, kind)

    async def update_status(obj: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        name = obj["metadata"]["name"]
        if name == "a" and _validation_failed(obj) and not b_status_written.is_set():
            # The injected ordering: b is reconciled (by the second worker) before a's
            # reconcile gets past this write.
            await kclient.create(rayservice("b", namespace))
            await asyncio.wait_for(b_status_written.wait(), timeout=60)
        written = await original_update_status(obj, *args, **kwargs)
        if name == "b":
            b_status_written.set()
        return written

    client.resource = resource
    client.update_status = update_status
    await kclient.create(incremental_rayservice("a", namespace))
    await wait_rs(kclient, namespace, "a", _validation_failed, message="a ValidationFailed")
    await asyncio.wait_for(b_status_written.wait(), timeout=60)
    await wait_rs(kclient, namespace, "b", pending_name, message="b reconciled")

    installed.set()  # the Gateway API CRDs are installed now
    ok = await wait_rs(
        kclient,
        namespace,
        "a",
        pending_name,
        timeout=30,
        message="a validated again after the Gateway API CRDs appeared",
    )
    assert pending_name(ok).startswith("a-")
