"""Compute templates: KubeRay's ConfigMap-backed resource presets, their V1 routes
(:mod:`.routes`) and the V2 proxy's middleware that applies them (:mod:`.middleware`)."""

from kuberay.apiserver.templates.errors import BadBody, TemplateMissing, UpstreamRefused
from kuberay.apiserver.templates.middleware import rewrite_body, template_fetcher
from kuberay.apiserver.templates.model import ComputeTemplate
from kuberay.apiserver.templates.routes import add_routes

__all__ = [
    "BadBody",
    "ComputeTemplate",
    "TemplateMissing",
    "UpstreamRefused",
    "add_routes",
    "rewrite_body",
    "template_fetcher",
]
