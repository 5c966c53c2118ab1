"""What replaces a kubeconfig's choice or field, as kubectl's connection flags do (client-go's
``ConfigOverrides``). Its own module, importing nothing, so ``kubectl ray``'s flags can be this
type without loading the loader (``--help`` stays light)."""

from __future__ import annotations

import dataclasses

__all__ = ["Overrides"]


@dataclasses.dataclass
class Overrides:
    """What replaces the kubeconfig's choice or field (None/empty: not given), as
    kubectl's connection flags do."""

    context: str | None = None
    cluster: str | None = None
    user: str | None = None
    namespace: str | None = None
    server: str | None = None
    token: str | None = None
    as_user: str | None = None
    as_groups: list[str] = dataclasses.field(default_factory=list)
    as_uid: str | None = None
    certificate_authority: str | None = None
    client_certificate: str | None = None
    client_key: str | None = None
    insecure_skip_tls_verify: bool = False
    tls_server_name: str | None = None
