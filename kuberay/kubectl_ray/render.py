"""``kubectl ray render -f FILE``: the children the operator would create, offline.

Uses :func:`kuberay.controllers.render.render` (the controllers' own builders). The
operator-level inputs come from flags: ``--feature-gates`` (as the operator's flag),
``--operator-env KEY=VALUE`` (its environment switches such as
``ENABLE_INIT_CONTAINER_INJECTION``) and ``--openshift`` (Routes instead of Ingress).
Output: YAML documents (default) or ``-o json`` (a ``v1 List``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from kuberay.api.v1.constants import GROUP
from kuberay.controllers.common.options import BuildOptions
from kuberay.controllers.render import RenderError, RenderOptions, render
from kuberay.featuregates import FeatureGateError
from kuberay.featuregates.kuberay_gates import new_feature_gate
from kuberay.kube import objects as k8s
from kuberay.kubectl_ray.common import key_values, merge_maps
from kuberay.kubectl_ray.context import CLIError, Env
from kuberay.kubectl_ray.output import as_list, dump

if TYPE_CHECKING:
    from kuberay.kube.objects import Object as Obj


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``render``."""
    p = sub.add_parser(
        "render",
        help="Print (offline) the objects the operator would create for a Ray resource",
        parents=[common],
    )
    p.add_argument("-f", "--filename", required=True, help="YAML file ('-' for stdin)")
    p.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    p.add_argument("--feature-gates", default="", help="operator feature gates (A=true,B=false)")
    p.add_argument(
        "--operator-env",
        type=key_values,
        action="append",
        default=[],
        help="operator environment switches, e.g. ENABLE_INIT_CONTAINER_INJECTION=false",
    )
    p.add_argument("--openshift", action="store_true", help="render a Route instead of an Ingress")
    p.set_defaults(handler=render_command, offline=True)


def load_documents(filename: str, stdin: Any = None) -> list[Obj]:
    """The YAML documents of ``filename`` (``-``: stdin), empty ones dropped."""
    try:
        text = (stdin or sys.stdin).read() if filename == "-" else Path(filename).read_text()
    except OSError as exc:
        raise CLIError(f"cannot read {filename}: {exc.strerror or exc}") from exc
    try:
        docs = [d for d in yaml.safe_load_all(text) if d]
    except yaml.YAMLError as exc:
        raise CLIError(f"{filename} is not valid YAML: {exc}") from exc
    for d in docs:
        if not isinstance(d, dict):
            raise CLIError(f"{filename}: every document must be a mapping")
    return docs


def render_options(args: argparse.Namespace) -> RenderOptions:
    """The operator-level inputs given on the command line."""
    gate = new_feature_gate()
    try:
        gate.set_from_string(args.feature_gates)
    except (FeatureGateError, ValueError) as exc:
        raise CLIError(f"--feature-gates: {exc}") from exc
    env = merge_maps(args.operator_env)
    return RenderOptions(
        build=BuildOptions.from_env(env),
        features=gate.as_dict(),
        openshift_routes=args.openshift,
    )


def render_documents(
    docs: list[Obj], options: RenderOptions, namespace: str | None, warn: Any
) -> list[Obj]:
    """Children of every Ray resource in ``docs`` (other kinds are skipped with a warning)."""
    out: list[Obj] = []
    for doc in docs:
        api_version = str(doc.get("apiVersion") or "")
        name = k8s.meta(doc).get("name", "")
        if not api_version.startswith(f"{GROUP}/"):
            warn(f"skipping {doc.get('kind')} {name}: not a Ray resource")
            continue
        obj = dict(doc)
        if namespace:
            obj["metadata"] = {**k8s.meta(doc), "namespace": namespace}
        try:
            out.extend(render(obj, options))
        except RenderError as exc:
            raise CLIError(f"{doc.get('kind')} {name}: {exc}") from exc
    return out


async def render_command(env: Env, args: argparse.Namespace) -> None:
    docs = load_documents(args.filename, env.stdin)
    namespace = env.namespace if env.namespace_explicit else None
    children = render_documents(docs, render_options(args), namespace, env.err)
    if args.output == "json":
        env.stdout.write(dump(as_list(children), "json"))
        return
    env.stdout.write("---\n".join(dump(c, "yaml") for c in children))


__all__ = ["load_documents", "register", "render_command", "render_documents", "render_options"]
