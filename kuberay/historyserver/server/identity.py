"""Who a logged-in caller is (``--kubernetes-login``), and how to ask the apiserver what it
may do: the pieces the login (``login``) and the live proxy's access check (``live_access``)
share. Imports nothing of the server, so either may use it.
"""

from __future__ import annotations

from typing import Any, Protocol

import attrs
from aiohttp import web

ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"


class KubeRequests(Protocol):
    """What the login needs of :class:`kuberay.kube.client.Client`."""

    async def request(self, method: str, path: str, *, verb: str, body: Any = None) -> Any:
        """Send one request, return the decoded answer."""
        ...


@attrs.frozen
class User:
    """An authenticated caller, as the TokenReview names it."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


#: Request key set by the login middleware: the caller, as its TokenReview named it.
LOGIN_USER: web.RequestKey[User] = web.RequestKey("kuberay_login_user", User)


def review_body(user: User, resource_attributes: dict[str, str]) -> dict[str, Any]:
    """A SubjectAccessReview asking whether ``user`` (its name, uid, groups and extra) may do
    what ``resource_attributes`` describe."""
    spec: dict[str, Any] = {
        "user": user.username,
        "groups": list(user.groups),
        "resourceAttributes": dict(resource_attributes),
    }
    if user.uid:
        spec["uid"] = user.uid
    if user.extra:
        spec["extra"] = {k: list(v) for k, v in user.extra}
    return {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": spec,
    }
