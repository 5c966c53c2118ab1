"""``kubectl ray delete (RAYCLUSTER | TYPE/NAME)...``: asks first unless ``-y``."""

from __future__ import annotations

import argparse
from typing import Any

from kuberay.api.v1.constants import API_VERSION
from kuberay.kube import ApiError
from kuberay.kubectl_ray.common import parse_type_name
from kuberay.kubectl_ray.context import CLIError, Env

TYPE_WORDS = {"RayCluster": "raycluster", "RayJob": "rayjob", "RayService": "rayservice"}


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``delete``."""
    p = sub.add_parser(
        "delete",
        help="Delete Ray resources",
        description="Deletes Ray custom resources such as RayCluster, RayService, or RayJob",
        parents=[common],
    )
    p.add_argument("resources", nargs="+", metavar="RAYCLUSTER | TYPE/NAME")
    p.add_argument(
        "-y",
        "--yes",
        action="store_true",
        help="answer 'yes' to all prompts and run non-interactively",
    )
    p.set_defaults(handler=delete)


async def delete(env: Env, args: argparse.Namespace) -> None:
    targets = [parse_type_name(a) for a in args.resources]
    if not args.yes:
        listing = "".join(f"\n- {TYPE_WORDS[k]}/{n}" for k, n in targets)
        env.stdout.write(
            f"Are you sure you want to delete the following resources?{listing}\n(y/yes/n/no)"
        )
        env.stdout.flush()
        answer = (env.stdin.readline() if env.stdin else "").strip().lower()
        if answer in ("n", "no"):
            env.out("Canceled deletion.")
            return
        if answer not in ("y", "yes"):
            env.out(f"Unknown input {answer}")
            return
    client = await env.client()
    for kind, name in targets:
        try:
            await client.delete(API_VERSION, kind, name, env.namespace)
        except ApiError as exc:
            raise CLIError(
                f"failed to delete {TYPE_WORDS[kind]}/{name}: {exc.message or exc}"
            ) from exc
        env.out(f"Deleted {TYPE_WORDS[kind]} {name}")


__all__ = ["delete", "register"]
