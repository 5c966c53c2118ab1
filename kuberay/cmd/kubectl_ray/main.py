"""The ``kubectl-ray`` entry point: the argparse tree and error handling.

Every command module has ``register(subparsers, common)``; a leaf parser sets
``handler`` (``async (env, args) -> int | None``). Global flags (``--kubeconfig``,
``--context``, ``-n/--namespace``) are accepted before or after the command, as
kubectl does. A :class:`~.context.CLIError` or an API error prints ``Error: ...``
and exits 1 (no traceback); usage errors exit 2.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import TextIO

from kuberay.cmd.kubectl_ray import (
    create,
    delete,
    get,
    history,
    job,
    log,
    render,
    scale,
    session,
    version,
    why,
)
from kuberay.cmd.kubectl_ray.context import CLIError, Env, context_namespace, kubeconfig_paths
from kuberay.kube import ApiError, KubeError, TransportError

PROG = "kubectl ray"
ENTRYPOINT_KEY = "entrypoint"


def common_flags() -> argparse.ArgumentParser:
    """The kubectl connection flags every command accepts (SUPPRESS: a value given
    before the command is not reset by the sub-parser)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--kubeconfig", default=argparse.SUPPRESS, help="path to the kubeconfig file"
    )
    common.add_argument(
        "--context", default=argparse.SUPPRESS, help="name of the kubeconfig context to use"
    )
    common.add_argument(
        "-n",
        "--namespace",
        default=argparse.SUPPRESS,
        help="namespace (default: the context's namespace, else 'default')",
    )
    return common


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree."""
    common = common_flags()
    parser = argparse.ArgumentParser(
        prog=PROG, description="Manage Ray resources on Kubernetes", parents=[common]
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in (get, create, delete, scale, job, log, session, history, version, render, why):
        module.register(sub, common)
    return parser


def _split_entrypoint(argv: list[str]) -> tuple[list[str], list[str] | None]:
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1 :]
    return argv, None


async def run(
    argv: Sequence[str],
    *,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    stdin: TextIO | None = None,
) -> int:
    """Run one ``kubectl ray`` command in the running event loop; the exit code."""
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    args_list, entrypoint = _split_entrypoint(list(argv))
    parser = build_parser()
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # usage error or --help
        return int(exc.code or 0)
    setattr(args, ENTRYPOINT_KEY, entrypoint)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(out)
        return 0
    env = Env(stdout=out, stderr=err, stdin=stdin or sys.stdin)
    try:
        env.kubeconfig = getattr(args, "kubeconfig", None)
        env.context = getattr(args, "context", None)
        explicit = getattr(args, "namespace", None)
        env.namespace_explicit = bool(explicit)
        env.all_namespaces = bool(getattr(args, "all_namespaces", False))
        env.namespace = explicit or context_namespace(kubeconfig_paths(env.kubeconfig), env.context)
        code = await handler(env, args)
        return int(code or 0)
    except CLIError as exc:
        err.write(f"Error: {exc}\n")
        return 1
    except ApiError as exc:
        err.write(f"Error: {exc.message or exc} ({exc.reason or exc.status})\n")
        return 1
    except TransportError as exc:
        err.write(f"Error: cannot reach the Kubernetes API server: {exc}\n")
        return 1
    except KubeError as exc:
        err.write(f"Error: {exc}\n")
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        await env.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point (``kubectl-ray``)."""
    try:
        return asyncio.run(run(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
