"""What the dashboard's own API routes answer (``/dashboard/api/...``): a status code and a
JSON body, sent as JSON and never cached. One type for every route (pods, why, history,
driver log, YAML to JSON), built here: compact JSON of a value, a Kubernetes ``Status``, or a
kube-apiserver answer passed back."""

from __future__ import annotations

import json
from typing import Any

import attrs
from aiohttp import web

from kuberay.apiserver.guard import status_body
from kuberay.apiserver.kube_calls import KubeAnswer

__all__ = ["JsonAnswer"]


@attrs.frozen
class JsonAnswer:
    """A route's answer: ``status`` and a JSON ``body``."""

    status: int
    body: bytes

    @classmethod
    def of(cls, value: Any, status: int = 200) -> JsonAnswer:
        """``value`` as compact JSON (``TypeError`` when JSON cannot hold it)."""
        return cls(status, json.dumps(value, separators=(",", ":")).encode())

    @classmethod
    def refused(cls, code: int, reason: str, message: str) -> JsonAnswer:
        """A Kubernetes ``Status`` answer (``Failure``, ``reason``, ``message``)."""
        return cls(code, status_body(code, reason, message))

    @classmethod
    def passed_back(cls, answer: KubeAnswer) -> JsonAnswer:
        """A kube-apiserver answer as it came when it is JSON (a ``Status``), else a
        ``Status`` holding its text."""
        if "json" in answer.content_type:
            return cls(answer.status, answer.body)
        message = answer.body.decode("utf-8", "replace").strip() or f"HTTP {answer.status}"
        return cls.refused(answer.status, "Failure", message)

    def response(self) -> web.Response:
        """The answer as the dashboard's routes send it: JSON, never cached."""
        return web.Response(
            status=self.status,
            body=self.body,
            content_type="application/json",
            headers={"Cache-Control": "no-store"},
        )
