"""A scripted KubeCall: answers by (method, path), records every call."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from kuberay.apiserver.kube_calls import KubeAnswer


def answer(status: int, body: Any) -> KubeAnswer:
    return KubeAnswer(status, json.dumps(body).encode())


def status(code: int, reason: str) -> KubeAnswer:
    return answer(
        code,
        {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "code": code},
    )


class FakeCall:
    """Answers each ``(method, path)`` from ``script`` (a list is consumed in order);
    anything unscripted is a 404 Status."""

    def __init__(self, script: dict[tuple[str, str], KubeAnswer | list[KubeAnswer]]) -> None:
        self.script = script
        self.calls: list[tuple[str, str, Any, dict[str, str] | None]] = []

    async def __call__(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
    ) -> KubeAnswer:
        self.calls.append((method, path, body, dict(params) if params else None))
        scripted = self.script.get((method, path), status(404, "NotFound"))
        return scripted.pop(0) if isinstance(scripted, list) else scripted
