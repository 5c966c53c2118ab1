"""The published client interfaces (controller-runtime's ``client.Reader`` / ``client.Writer``).

Code that only reads or writes objects takes a :class:`Reader`, :class:`Writer` or
:class:`ReadWriter` instead of :class:`kuberay.kube.Client`, so a test can hand it a fake and a
reader can be a cache. :class:`kuberay.kube.Client` satisfies all three; the signatures below
are its ``get``/``list``/``list_all`` and ``create``/``update``/``patch``/``delete`` (``update``
without its ``subresource`` argument, which status writers use on the client itself).
"""

from __future__ import annotations

import builtins
from typing import Any, Literal, Protocol

from kuberay.kube.objects import Object

__all__ = ["PatchType", "ReadWriter", "Reader", "Writer"]

#: How a patch is encoded: JSON merge, JSON patch, strategic merge or server-side apply.
PatchType = Literal["merge", "json", "strategic", "apply"]


class Reader(Protocol):
    """Reads objects: one by name, one page of a list, or every page."""

    async def get(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        subresource: str | None = None,
        metadata_only: bool = False,
    ) -> Object:
        """The object ``namespace/name``; raises ``NotFound`` when there is none."""
        ...

    async def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_token: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        metadata_only: bool = False,
    ) -> Object:
        """One page of a list: the ``*List`` object (``items``, ``metadata.continue``)."""
        ...

    async def list_all(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        page_size: int = 500,
        resource_version: str | None = None,
        metadata_only: bool = False,
    ) -> tuple[builtins.list[Object], str]:
        """Every item across pages (labelled with apiVersion/kind), and the resourceVersion."""
        ...


class Writer(Protocol):
    """Creates, updates, patches and deletes objects."""

    async def create(self, obj: Object, *, field_manager: str | None = None) -> Object:
        """Create ``obj``; raises ``AlreadyExists`` when its name is taken."""
        ...

    async def update(self, obj: Object, *, field_manager: str | None = None) -> Object:
        """Replace ``obj`` (PUT) and return what the apiserver stored; raises ``Conflict``
        when its ``metadata.resourceVersion`` is no longer the stored one."""
        ...

    async def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: PatchType = "merge",
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool | None = None,
        metadata_only: bool = False,
    ) -> Object:
        """Patch one object and return what the apiserver stored."""
        ...

    async def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: Literal["Foreground", "Background", "Orphan"] | None = None,
        preconditions: dict[str, str] | None = None,
        grace_period_seconds: int | None = None,
    ) -> Object | None:
        """Delete one object; ``preconditions`` may pin ``uid``/``resourceVersion``."""
        ...


class ReadWriter(Reader, Writer, Protocol):
    """Both a :class:`Reader` and a :class:`Writer` (controller-runtime's ``client.Client``)."""
