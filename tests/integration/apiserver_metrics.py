"""The apiserver's own request counters (``GET /metrics``): what every client sent it, counted
where it arrives. Tests use them to prove how often the operator reads or writes a resource."""

from __future__ import annotations

import re
from collections.abc import Mapping

from kuberay.kube import Client

_SAMPLE = re.compile(r"^apiserver_request_total\{(?P<labels>[^}]*)\} (?P<value>\S+)$")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


async def apiserver_requests(client: Client, *, resource: str, verb: str) -> int:
    """``apiserver_request_total`` summed over every code for ``verb`` (the apiserver's
    upper-case verb: GET, LIST, WATCH, CREATE, UPDATE, PATCH, DELETE) on ``resource``."""
    headers = {"Accept": "text/plain"}
    auth = await client.configuration.auth_settings()
    bearer = auth.get("BearerToken") if isinstance(auth, Mapping) else None
    if isinstance(bearer, Mapping) and bearer.get("value"):
        headers["Authorization"] = str(bearer["value"])
    async with client.session.get(client.host.rstrip("/") + "/metrics", headers=headers) as resp:
        resp.raise_for_status()
        text = await resp.text()
    total = 0.0
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if match is None:
            continue
        labels = dict(_LABEL.findall(match["labels"]))
        if labels.get("resource") == resource and labels.get("verb") == verb:
            total += float(match["value"])
    return int(total)
