"""``kubectl ray history list|open``: the stored Ray sessions a history server serves.

* ``list``: the namespace's stored clusters and sessions (``-A``: every namespace), newest
  first, from the server's ``GET /clusters``; a table (``NAME NAMESPACE SESSION OWNER KIND
  OWNER NAME CREATED``) or ``-o json|yaml`` (the server's entries as they are).
* ``open NAME [--session S] [--kind raycluster|rayjob|rayservice]``: checks that the
  session is stored (default: the newest) and prints its
  ``<server>/enter_cluster/<ns>/<kind>/<name>/<session>`` URL. ``NAME`` is the RayCluster
  (a RayJob's or RayService's too) for ``raycluster`` and the owner otherwise; without ``--kind`` a
  RayCluster of that name is looked for first, then a RayJob or RayService owner.

Which server: ``--history-server URL`` (``--server`` is kubectl's apiserver flag) or else
``$KUBERAY_HISTORY_SERVER``; with neither, the server
runs in the cluster: the Service ``--service [NAMESPACE/]NAME`` (default
``kuberay-history-server``, looked up in every namespace when none is given) is reached by
port-forwarding, through the apiserver, to a ready pod behind it (``portforward``), on
``127.0.0.1:--local-port`` (default: a free port). ``list`` stops forwarding when done;
``open`` prints the local URL and keeps forwarding until Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

import aiohttp

from kuberay.kube import Client, NotFound
from kuberay.kube import objects as k8s
from kuberay.kubectl_ray.common import add_all_namespaces_flag, add_output_flag
from kuberay.kubectl_ray.context import CLIError, Env
from kuberay.kubectl_ray.output import emit, format_table
from kuberay.kubectl_ray.portforward import bind_local, serve_forward

if TYPE_CHECKING:
    from kuberay.kube.objects import Object as Obj

SERVER_ENV = "KUBERAY_HISTORY_SERVER"
DEFAULT_SERVICE = "kuberay-history-server"
KINDS = ("raycluster", "rayjob", "rayservice")
TIMEOUT = 60.0
HEADERS = ["Name", "Namespace", "Session", "Owner Kind", "Owner Name", "Created"]


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``history list`` and ``history open``."""
    server = argparse.ArgumentParser(add_help=False)
    server.add_argument(
        "--history-server",
        default=None,
        metavar="URL",
        help=f"history server base URL (default: ${SERVER_ENV}, else port-forward to --service)",
    )
    server.add_argument(
        "--service",
        default=DEFAULT_SERVICE,
        help="[NAMESPACE/]NAME of the in-cluster history server Service "
        f"(default {DEFAULT_SERVICE}, in whichever namespace has it)",
    )
    server.add_argument(
        "--local-port", type=int, default=0, help="local port of the port-forward (default: any)"
    )
    history = sub.add_parser(
        "history", help="Browse stored Ray sessions in the history server.", parents=[common]
    )
    cmds = history.add_subparsers(dest="history_command", metavar="COMMAND", required=True)
    p = cmds.add_parser(
        "list", help="List the stored clusters and sessions.", parents=[common, server]
    )
    add_all_namespaces_flag(p, "stored sessions")
    add_output_flag(p)
    p.set_defaults(handler=history_list)
    p = cmds.add_parser(
        "open", help="Print the URL that opens a stored session.", parents=[common, server]
    )
    p.add_argument("name", help="RayCluster name, or the RayJob/RayService name with --kind")
    p.add_argument("--session", default="", help="session name (default: the newest)")
    p.add_argument("--kind", choices=KINDS, default=None, help="kind of NAME (default: guessed)")
    p.set_defaults(handler=history_open)


# ----- the server's entries ----------------------------------------------------------------
def rows(entries: list[Obj]) -> list[list[object]]:
    """The ``list`` table's rows, in the server's order (newest first)."""
    return [
        [
            e.get("name", ""),
            e.get("namespace", ""),
            e.get("sessionName", ""),
            e.get("ownerKind") or "-",
            e.get("ownerName") or "-",
            e.get("createTime") or "-",
        ]
        for e in entries
    ]


def select_session(
    entries: list[Obj], namespace: str, name: str, kind: str | None, session: str
) -> tuple[str, Obj]:
    """``(kind, entry)`` of the stored session ``open`` means: NAME as a RayCluster (kind
    ``raycluster`` or unset) or as an owner; the given session or the newest (entries come
    newest first). CLIError naming what is stored when nothing matches."""
    here = [e for e in entries if e.get("namespace") == namespace]

    def matching(k: str) -> list[Obj]:
        if k == "raycluster":  # the cluster's own name, whatever owns it (as the server)
            return [e for e in here if e.get("name") == name]
        return [e for e in here if e.get("ownerKind") == k and e.get("ownerName") == name]

    candidates = [kind] if kind else list(KINDS)
    found = [(k, matching(k)) for k in candidates]
    found = [(k, m) for k, m in found if m]
    if not found:
        what = f"{kind} {name}" if kind else name
        raise CLIError(
            f"no stored session of {what} in namespace {namespace} "
            "(kubectl ray history list shows what is stored)"
        )
    chosen_kind, sessions = found[0]
    if session:
        sessions = [e for e in sessions if e.get("sessionName") == session]
        if not sessions:
            raise CLIError(
                f"{chosen_kind} {name} in namespace {namespace} has no stored session {session}"
            )
    return chosen_kind, sessions[0]


def enter_url(base: str, namespace: str, kind: str, entry: Obj) -> str:
    """``<base>/enter_cluster/<ns>/<kind>/<name>/<session>`` (the owner's name for an owned
    cluster, as the server's route takes it)."""
    name = entry["name"] if kind == "raycluster" else entry["ownerName"]
    parts = (namespace, kind, name, entry["sessionName"])
    return base.rstrip("/") + "/enter_cluster/" + "/".join(quote(p, safe="") for p in parts)


async def fetch_clusters(base: str, timeout: float = TIMEOUT) -> list[Obj]:
    """The server's ``GET /clusters`` list; CLIError when it cannot be had."""
    url = base.rstrip("/") + "/clusters"
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session,
            session.get(url) as resp,
        ):
            if resp.status != 200:
                text = (await resp.text())[:200]
                raise CLIError(f"history server {base} answered {resp.status}: {text}")
            data = await resp.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        reason = str(exc) or type(exc).__name__
        raise CLIError(f"cannot reach the history server at {base}: {reason}") from exc
    if not isinstance(data, list):
        raise CLIError(f"history server {base}: /clusters did not answer a list")
    return [e for e in data if isinstance(e, dict)]


# ----- where the server is ------------------------------------------------------------------
def server_url(args: argparse.Namespace) -> str | None:
    """``--history-server`` or ``$KUBERAY_HISTORY_SERVER`` (checked: an http(s) URL), else None."""
    url = (args.history_server or os.environ.get(SERVER_ENV, "")).strip()
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CLIError(f"invalid history server URL {url!r}: use e.g. http://127.0.0.1:8080")
    return url.rstrip("/")


async def find_service(client: Client, ref: str, namespace_explicit: str | None) -> Obj:
    """The Service ``[NS/]NAME``: in NS (or ``-n``) when given, else the only one of that
    name in the cluster."""
    ns, _, name = ref.rpartition("/")
    ns = ns or (namespace_explicit or "")
    if ns:
        try:
            svc: Obj = await client.get("v1", "Service", name, ns)
        except NotFound as exc:
            raise CLIError(f"no Service {name} in namespace {ns}") from exc
        return svc
    items, _ = await client.list_all("v1", "Service", None, field_selector=f"metadata.name={name}")
    if not items:
        raise CLIError(
            f"no history server Service {name} in the cluster: install manifests/historyserver "
            f"(or the chart with historyServer.enabled=true), or pass --history-server URL"
        )
    if len(items) > 1:
        where = ", ".join(f"{s['metadata']['namespace']}/{name}" for s in items)
        raise CLIError(f"several Services named {name} ({where}): pick one with --service NS/NAME")
    return items[0]


def _pod_ready(pod: Obj) -> bool:
    status = k8s.status(pod)
    if status.get("phase") != "Running" or k8s.meta(pod).get("deletionTimestamp"):
        return False
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )


def container_port(pod: Obj, target: object) -> int:
    """The pod's port for a Service ``targetPort`` (a number, or a container port's name)."""
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for c in k8s.spec(pod).get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("name") == target:
                return int(p["containerPort"])
    raise CLIError(f"pod {pod['metadata']['name']} has no container port named {target}")


async def ready_pod(client: Client, service: Obj) -> Obj:
    """A ready pod the Service selects (the first by name)."""
    meta = service["metadata"]
    selector = k8s.spec(service).get("selector") or {}
    if not selector:
        raise CLIError(f"Service {meta['namespace']}/{meta['name']} selects no pods")
    label_selector = ",".join(f"{k}={v}" for k, v in sorted(selector.items()))
    pods, _ = await client.list_all("v1", "Pod", meta["namespace"], label_selector=label_selector)
    ready = sorted((p for p in pods if _pod_ready(p)), key=lambda p: p["metadata"]["name"])
    if not ready:
        raise CLIError(
            f"no ready history server pod behind Service {meta['namespace']}/{meta['name']} "
            f"(kubectl -n {meta['namespace']} get pods -l {label_selector})"
        )
    return ready[0]


def _http_port(service: Obj) -> object:
    ports = k8s.spec(service).get("ports") or []
    if not ports:
        raise CLIError(f"Service {service['metadata']['name']} has no ports")
    chosen = next((p for p in ports if p.get("name") == "http"), ports[0])
    return chosen.get("targetPort", chosen.get("port"))


@contextlib.asynccontextmanager
async def forward_to_service(env: Env, args: argparse.Namespace) -> AsyncIterator[str]:
    """Port-forward ``127.0.0.1:--local-port`` to the history server Service's pod; yields
    ``http://127.0.0.1:<port>``. The local port is bound first (a taken port fails at once);
    each connection follows the Service to whichever of its pods is ready then."""
    sock = bind_local(args.local_port, "history server")
    try:
        client = await env.client()
        # -n names the stored clusters' namespace, not the server's: the Service is found by
        # --service NS/NAME, else by its name in every namespace
        service = await find_service(client, args.service, None)
        namespace = service["metadata"]["namespace"]
        pod = await ready_pod(client, service)
        remote = container_port(pod, _http_port(service))

        async def resolve() -> str:
            return str((await ready_pod(client, service))["metadata"]["name"])

        server = await serve_forward(client, namespace, resolve, sock, remote, env.err)
        port = sock.getsockname()[1]
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.close()
            await server.wait_closed()
    finally:
        sock.close()


#: how ``list``/``open`` reach an in-cluster server (tests replace it)
Forwarder = Callable[[Env, argparse.Namespace], contextlib.AbstractAsyncContextManager[str]]
FORWARD: Forwarder = forward_to_service


@contextlib.asynccontextmanager
async def _server(env: Env, args: argparse.Namespace) -> AsyncIterator[tuple[str, bool]]:
    """``(base URL, forwarded)``."""
    url = server_url(args)
    if url is not None:
        yield url, False
        return
    async with FORWARD(env, args) as local:
        yield local, True


# ----- commands ----------------------------------------------------------------------------
async def history_list(env: Env, args: argparse.Namespace) -> None:
    async with _server(env, args) as (base, _):
        entries = await fetch_clusters(base)
    if not env.all_namespaces:
        entries = [e for e in entries if e.get("namespace") == env.namespace]
    if emit(env, args.output, entries):
        return
    if not entries:
        where = "" if env.all_namespaces else f" in namespace {env.namespace}"
        env.err(f"No stored sessions found{where}.")
        return
    env.stdout.write(format_table(HEADERS, rows(entries)))
    env.stdout.flush()


async def history_open(env: Env, args: argparse.Namespace) -> int:
    async with _server(env, args) as (base, forwarded):
        entries = await fetch_clusters(base)
        kind, entry = select_session(entries, env.namespace, args.name, args.kind, args.session)
        env.out(enter_url(base, env.namespace, kind, entry))
        if not forwarded:
            return 0
        env.err(f"Forwarding {base} to the history server. Press Ctrl-C to stop.")
        await asyncio.Event().wait()  # until Ctrl-C / cancellation
    return 0


__all__ = [
    "DEFAULT_SERVICE",
    "SERVER_ENV",
    "container_port",
    "enter_url",
    "fetch_clusters",
    "find_service",
    "forward_to_service",
    "ready_pod",
    "register",
    "rows",
    "select_session",
    "server_url",
]
