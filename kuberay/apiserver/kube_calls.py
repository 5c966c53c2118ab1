"""The one way a route asks the kube-apiserver something on its caller's behalf.

Handlers never hold credentials: they are given a :class:`KubeCall` bound to the request's
identity (the caller's token in caller mode, the server's own in service-account mode), so
every read made for a caller (a compute template's ConfigMap, the Service label check) is
made as that caller and RBAC applies to it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol

import attrs

#: The largest answer a :class:`KubeCall` buffers (a ConfigMap, a Service, a Status):
#: the apiserver's own request limit is 3 MiB; lists of templates stay far below.
MAX_BUFFERED_ANSWER = 8 * 2**20


@attrs.frozen
class KubeAnswer:
    """A whole answer of the kube-apiserver: its status code, body and content type."""

    status: int
    body: bytes
    content_type: str = "application/json"

    def json(self) -> Any:
        """The body decoded as JSON (``ValueError`` when it is not JSON)."""
        return json.loads(self.body)

    @property
    def ok(self) -> bool:
        """A 2xx answer."""
        return 200 <= self.status < 300


class KubeCall(Protocol):
    """Send one request to the kube-apiserver as the bound identity and return the whole
    answer (at most :data:`MAX_BUFFERED_ANSWER` bytes). ``path`` is percent-encoded already
    (build it with :mod:`kuberay.kube.paths`); ``body`` is JSON-encoded when given. Errors
    of the apiserver come back as answers (4xx/5xx), not exceptions; a transport failure
    raises :class:`kuberay.apiserver.errors.UpstreamUnavailable`."""

    async def __call__(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
    ) -> KubeAnswer:
        """See the class doc."""
        ...
