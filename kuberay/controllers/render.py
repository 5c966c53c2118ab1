"""Offline rendering: the child objects a controller would create for a custom
resource, from the same builders the controller uses, without a cluster.

Extension point: each kind maps to ``"module:function"`` in :data:`RENDERERS`, loaded
lazily; the function has the signature of :data:`Renderer`. A new kind adds its line
(as RayCluster, RayJob and RayService do) or calls :func:`register` at import time. A
renderer takes the object *as the apiserver would store it* minus server-set metadata (it
applies the CRD defaults itself) and returns the children in the order the controllers
create them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

import attrs

from kuberay.controllers.common.options import BuildOptions
from kuberay.kube.objects import Object as Obj


@attrs.frozen
class RenderOptions:
    """Operator-level inputs that are not in the object: build options (the operator's
    environment switches), feature gates, and whether the apiserver serves OpenShift
    Routes (then ``enableIngress`` renders a Route instead of an Ingress)."""

    build: BuildOptions = attrs.field(factory=BuildOptions)
    features: Mapping[str, bool] = attrs.field(factory=dict)
    openshift_routes: bool = False


Renderer = Callable[[Obj, RenderOptions], list[Obj]]


class RenderError(ValueError):
    """The object cannot be rendered (unknown kind, invalid spec); one line for the user."""


#: kind -> "module:function" of its renderer.
RENDERERS: dict[str, str] = {
    "RayCluster": "kuberay.controllers.raycluster.render:render_raycluster",
    "RayJob": "kuberay.controllers.rayjob.render:render_rayjob",
    "RayService": "kuberay.controllers.rayservice.render:render_rayservice",
}
_loaded: dict[str, Renderer] = {}


def register(kind: str, renderer: Renderer) -> None:
    """Make ``renderer`` the renderer of ``kind`` (replacing any)."""
    _loaded[kind] = renderer


def supported_kinds() -> list[str]:
    """Kinds that can be rendered."""
    return sorted(set(RENDERERS) | set(_loaded))


def renderer_for(kind: str) -> Renderer:
    """The renderer of ``kind``; RenderError when there is none."""
    found = _loaded.get(kind)
    if found is not None:
        return found
    target = RENDERERS.get(kind)
    if target is None:
        raise RenderError(
            f"rendering {kind} is not supported yet (supported: {', '.join(supported_kinds())})"
        )
    module_name, func_name = target.split(":", 1)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise RenderError(f"rendering {kind} is not available in this build: {exc}") from exc
    fn: Renderer = getattr(module, func_name)
    _loaded[kind] = fn
    return fn


def render(obj: Obj, options: RenderOptions | None = None) -> list[Obj]:
    """The children the operator would create for ``obj``."""
    kind = str(obj.get("kind") or "")
    return renderer_for(kind)(obj, options or RenderOptions())


__all__ = [
    "RENDERERS",
    "RenderError",
    "RenderOptions",
    "Renderer",
    "register",
    "render",
    "renderer_for",
    "supported_kinds",
]
