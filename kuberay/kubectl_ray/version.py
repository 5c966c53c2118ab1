"""``kubectl ray version``: the plugin's version and the operator's (from the image tag
of the Deployment labelled ``app.kubernetes.io/name`` kuberay-operator or kuberay)."""

from __future__ import annotations

import argparse
from importlib import metadata
from typing import Any

from kuberay.kube import KubeError
from kuberay.kube import objects as k8s
from kuberay.kubectl_ray.common import add_output_flag
from kuberay.kubectl_ray.context import CLIError, Env
from kuberay.kubectl_ray.output import emit

OPERATOR_SELECTOR = "app.kubernetes.io/name in (kuberay-operator,kuberay)"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``version``."""
    p = sub.add_parser(
        "version",
        help="Output the version of the Ray kubectl plugin and KubeRay operator",
        parents=[common],
    )
    add_output_flag(p)
    p.set_defaults(handler=version)


def plugin_version() -> str:
    """This package's version ("development" when not installed)."""
    try:
        return metadata.version("kuberay")
    except metadata.PackageNotFoundError:
        return "development"


def image_tag(image: str) -> str:
    """The tag (or digest) of an image reference; "latest" when it has none."""
    if "@" in image:
        return image.split("@", 1)[1]
    last = image.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else "latest"


async def operator_version(env: Env) -> str:
    """The operator's version, or a CLIError saying why it is unknown."""
    client = await env.client()
    items, _ = await client.list_all(
        "apps/v1", "Deployment", None, label_selector=OPERATOR_SELECTOR
    )
    if not items:
        raise CLIError("no KubeRay operator deployments found in any namespace")
    containers = ((k8s.spec(items[0]).get("template") or {}).get("spec") or {}).get(
        "containers"
    ) or []
    if not containers:
        raise CLIError("no containers found in KubeRay operator deployment")
    return image_tag(str(containers[0].get("image") or ""))


async def version(env: Env, args: argparse.Namespace) -> None:
    mine = plugin_version()
    try:
        theirs: str | None = await operator_version(env)
        problem = ""
    except (CLIError, KubeError) as exc:
        theirs, problem = None, str(exc)
    if emit(
        env, args.output, {"plugin": mine, "operator": theirs, "operatorError": problem or None}
    ):
        return
    env.out(f"kubectl ray plugin version: {mine}")
    if theirs is None:
        env.out(
            f"warning: KubeRay operator installation cannot be found: {problem}. Did you "
            'install it with the name "kuberay-operator"?'
        )
    else:
        env.out(f"KubeRay operator version: {theirs}")


__all__ = ["image_tag", "operator_version", "plugin_version", "register", "version"]
