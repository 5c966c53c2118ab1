"""Who a request reaches the kube-apiserver as.

``--auth-mode=caller`` (the default): the caller's own bearer token, passed through
unchanged. Why not TokenReview and impersonation: passing the token through leaves the
server with no power of its own (a ServiceAccount that may impersonate can become anyone,
so a compromised server would be cluster-admin), audit logs name the user as the apiserver
authenticated it (groups and extra included, with nothing to copy), and a token the
apiserver would refuse is refused by the apiserver itself. The price: a caller must show a
token (``kubectl create token``, an OIDC id-token); a client certificate cannot be passed on.

``--auth-mode=service-account``: the server's own credentials, as KubeRay's does.

A caller's token never travels on a connection that presents the server's client
certificate (:mod:`kuberay.apiserver.upstream` keeps the two apart).
"""

from __future__ import annotations

import re

import attrs

#: RFC 6750's ``b64token``: what a bearer token may hold.
_B64TOKEN = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
#: Longest token accepted (service account tokens are ~1 KiB, OIDC id-tokens a few).
MAX_TOKEN = 16 * 1024


@attrs.frozen(repr=False)
class Identity:
    """The credential a request goes upstream with: a caller's ``Authorization`` value, or
    none (``own``: the server's credentials). Never logged (``repr`` hides the token)."""

    authorization: str = ""
    own: bool = False

    def __repr__(self) -> str:
        return "Identity(own)" if self.own else "Identity(caller)"


SERVER = Identity(own=True)


class MissingCredentials(Exception):
    """The request carries no usable bearer token; the message says why (never the token)."""


def caller_identity(authorization: str | None) -> Identity:
    """The caller's identity from its ``Authorization`` header: ``Bearer <token>`` with an
    RFC 6750 token; :class:`MissingCredentials` otherwise."""
    if not authorization:
        raise MissingCredentials("no credentials: send Authorization: Bearer <token>")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer":
        raise MissingCredentials("only bearer tokens are accepted")
    token = token.strip()
    if not token or len(token) > MAX_TOKEN or not _B64TOKEN.fullmatch(token):
        raise MissingCredentials("malformed bearer token")
    return Identity(authorization=f"Bearer {token}")
