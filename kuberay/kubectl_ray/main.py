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
import importlib
import sys
from collections.abc import Sequence
from typing import TextIO

from kuberay.kubectl_ray import completion
from kuberay.kubectl_ray.connection import ConnectionFlags
from kuberay.kubectl_ray.context import CLIError, Env, context_namespace
from kuberay.kubectl_ray.errors import api_error, unreachable
from kuberay.kubectl_ray.helptext import decorate

PROG = "kubectl ray"
ENTRYPOINT_KEY = "entrypoint"
#: The hidden command shells and kubectl call for completions.
COMPLETE = "__complete"


def common_flags() -> argparse.ArgumentParser:
    """kubectl's connection flags, which every command accepts before or after its name
    (SUPPRESS: a value given before the command is not reset by the sub-parser)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "-n",
        "--namespace",
        default=argparse.SUPPRESS,
        help="namespace (default: the context's namespace, else 'default')",
    )
    g = common.add_argument_group("kubectl connection flags")
    add = g.add_argument
    s = argparse.SUPPRESS
    add("--kubeconfig", default=s, help="path to the kubeconfig file (default: $KUBECONFIG "
        "merged, else ~/.kube/config)")  # fmt: skip
    add("--context", default=s, help="the name of the kubeconfig context to use")
    # dests prefixed: commands have positionals named cluster (scale cluster, get token)
    add("--cluster", dest="kube_cluster", default=s, metavar="CLUSTER",
        help="the name of the kubeconfig cluster to use")  # fmt: skip
    add("--user", dest="kube_user", default=s, metavar="USER",
        help="the name of the kubeconfig user to use")  # fmt: skip
    add("-s", "--server", dest="kube_server", default=s, metavar="SERVER",
        help="the address and port of the Kubernetes API server")  # fmt: skip
    add("--token", dest="kube_token", default=s, metavar="TOKEN",
        help="bearer token for authentication to the API server")  # fmt: skip
    add("--as", dest="as_user", default=s, metavar="USER",
        help="username to impersonate for the operation")  # fmt: skip
    add("--as-group", dest="as_groups", action="append", default=s, metavar="GROUP",
        help="group to impersonate for the operation (repeatable)")  # fmt: skip
    add("--as-uid", default=s, metavar="UID", help="UID to impersonate for the operation")
    add("--certificate-authority", default=s, metavar="FILE",
        help="path to a cert file for the certificate authority")  # fmt: skip
    add("--client-certificate", default=s, metavar="FILE",
        help="path to a client certificate file for TLS")  # fmt: skip
    add("--client-key", default=s, metavar="FILE", help="path to a client key file for TLS")
    add("--insecure-skip-tls-verify", action="store_true", default=s,
        help="do not check the server's certificate (HTTPS becomes insecure)")  # fmt: skip
    add("--tls-server-name", default=s, metavar="NAME",
        help="server name for certificate validation (default: the host)")  # fmt: skip
    add("--request-timeout", default=s, metavar="DURATION",
        help="how long to wait for a single server request: 0 (no limit), seconds, or "
        "a duration like 5s, 1m, 3h (default: 30s)")  # fmt: skip
    return common


def connection_flags(args: argparse.Namespace) -> ConnectionFlags:
    """The connection flags given on the command line."""
    return ConnectionFlags(
        kubeconfig=getattr(args, "kubeconfig", None),
        context=getattr(args, "context", None),
        cluster=getattr(args, "kube_cluster", None),
        user=getattr(args, "kube_user", None),
        namespace=getattr(args, "namespace", None) or None,
        server=getattr(args, "kube_server", None),
        token=getattr(args, "kube_token", None),
        as_user=getattr(args, "as_user", None),
        as_groups=list(getattr(args, "as_groups", None) or []),
        as_uid=getattr(args, "as_uid", None),
        certificate_authority=getattr(args, "certificate_authority", None),
        client_certificate=getattr(args, "client_certificate", None),
        client_key=getattr(args, "client_key", None),
        insecure_skip_tls_verify=bool(getattr(args, "insecure_skip_tls_verify", False)),
        tls_server_name=getattr(args, "tls_server_name", None),
        request_timeout=getattr(args, "request_timeout", None),
    )


#: Every command: (name, aliases, one-line help, module). A command's module (and what
#: it imports: the API client, the controllers) is imported only when that command runs,
#: so ``--help`` and completion start fast.
COMMANDS: list[tuple[str, list[str], str, str]] = [
    ("get", ["list"], "Display one or many Ray resources.", "get"),
    ("create", [], "Create Ray resources", "create"),
    ("delete", [], "Delete Ray resources", "delete"),
    ("scale", [], "Scale a Ray resource", "scale"),
    ("job", [], "Ray job commands", "job"),
    ("log", ["logs"], "Get Ray cluster log", "log"),
    ("session", [], "Forward local ports to the Ray resources.", "session"),
    ("history", [], "Browse stored Ray sessions in the history server.", "history"),
    ("version", [], "Output the version of the Ray kubectl plugin and KubeRay operator", "version"),
    ("render", [], "Print (offline) the objects the operator would create", "render"),
    ("why", [], "Explain why a RayCluster, RayJob or RayService is not ready", "why"),
    ("completion", [], "Print a shell completion script (bash, zsh or fish).", "completion"),
]
ALL = "*"


def command_of(argv: Sequence[str]) -> str | None:
    """The command word in ``argv`` (skipping global flags and their values), or None."""
    takes_value = {
        s
        for a in common_flags()._actions
        if a.nargs != 0 and not isinstance(a, argparse._StoreTrueAction)
        for s in a.option_strings
    }
    words = list(argv)
    i = 0
    while i < len(words):
        word = words[i]
        if word == "--":
            return None
        if word.startswith("-"):
            i += 2 if word in takes_value else 1
            continue
        return word
    return None


def build_parser(command: str | None = ALL) -> argparse.ArgumentParser:
    """The command tree: every command fully (``ALL``), only ``command`` fully and the
    others as names (a word), or names only (None)."""
    common = common_flags()
    parser = argparse.ArgumentParser(
        prog=PROG, description="Manage Ray resources on Kubernetes", parents=[common]
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, aliases, text, module in COMMANDS:
        if command in (ALL, name) or command in aliases:
            importlib.import_module(f"{__package__}.{module}").register(sub, common)
        else:
            sub.add_parser(name, aliases=aliases, help=text, parents=[common])
    decorate(parser)
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
    if argv and argv[0] == COMPLETE:  # cobra's completion request (kubectl's protocol)
        return await completion.complete(list(argv[1:]), out)
    args_list, entrypoint = _split_entrypoint(list(argv))
    parser = build_parser(command_of(args_list))
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # usage error or --help
        return int(exc.code or 0)
    setattr(args, ENTRYPOINT_KEY, entrypoint)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help(out)
        return 0
    flags = connection_flags(args)
    env = Env(stdout=out, stderr=err, stdin=stdin or sys.stdin, flags=flags)
    try:
        env.namespace_explicit = bool(flags.namespace)
        env.all_namespaces = bool(getattr(args, "all_namespaces", False))
        env.namespace = context_namespace(flags)
        code = await handler(env, args)
        return int(code or 0)
    except CLIError as exc:
        err.write(f"Error: {exc}\n")
        return 1
    except Exception as exc:
        message = describe_failure(env, exc)
        if message is None:
            raise
        err.write(f"Error: {message}\n")
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        await env.close()


def describe_failure(env: Env, exc: Exception) -> str | None:
    """The one-line message for a failure talking to the apiserver (None: a bug, which
    keeps its traceback)."""
    from kuberay.kube import ApiError, KubeError, TransportError
    from kuberay.kube.errors import ConfigError

    timeout = env.connection().request_timeout if env.server else None
    if isinstance(exc, ApiError):
        return api_error(env.server, exc.status, str(exc.reason or ""), str(exc.message or ""))
    if isinstance(exc, ConfigError):  # a credential plugin failing mid-run, say
        return str(exc)
    if isinstance(exc, TransportError):
        return unreachable(env.server, exc, timeout)
    if isinstance(exc, KubeError):
        return str(exc)
    if isinstance(exc, OSError):  # a certificate file that cannot be read, ...
        name = f" {exc.filename}" if exc.filename else ""
        return f"{exc.strerror or exc}{name}"
    return None


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point (``kubectl-ray``)."""
    try:
        return asyncio.run(run(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
