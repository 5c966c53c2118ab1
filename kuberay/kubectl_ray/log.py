"""``kubectl ray log (RAYCLUSTER | TYPE/NAME) [--out-dir DIR] [--node-type all|head|worker]``.

For each Ray node pod: its Ray container's stdout (the pod log) into
``DIR/<pod>/stdout.log``, then ``/tmp/ray/session_latest/logs`` copied out of the
container (``tar`` run through the apiserver's exec websocket) into ``DIR/<pod>/``.
Without ``--out-dir`` a directory named after the resource is created here.
"""

from __future__ import annotations

import argparse
import io
import tarfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
import orjson

from kuberay.kube import Client
from kuberay.kube import objects as k8s
from kuberay.kube.paths import segment
from kuberay.kubectl_ray.common import CLUSTER_LABEL, NODE_TYPE_LABEL, parse_type_name
from kuberay.kubectl_ray.context import CLIError, Env
from kuberay.kubectl_ray.log_stream import follow, print_gke_link
from kuberay.kubectl_ray.session import cluster_of

if TYPE_CHECKING:
    from kuberay.kube.objects import Object as Obj

LOG_DIR_IN_POD = "/tmp/ray/session_latest/logs/"
EXEC_PROTOCOL = "v4.channel.k8s.io"
STDOUT, STDERR, ERROR = 1, 2, 3


EXAMPLES = """examples:
  # Download the logs of every node of a RayCluster into ./my-raycluster/
  kubectl ray log my-raycluster

  # Only the head node's logs, into an existing directory
  kubectl ray log my-raycluster --node-type head --out-dir ./logs

  # The logs of a RayJob's / RayService's cluster
  kubectl ray log rayjob/my-rayjob

  # Stream the head node's output (like kubectl logs -f)
  kubectl ray logs my-raycluster --follow

  # Print a link to Google Cloud Console to view logs for a Ray cluster
  kubectl ray log my-raycluster --link gke"""


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``log`` (alias ``logs``, the form Ray's docs use)."""
    p = sub.add_parser(
        "log",
        aliases=["logs"],
        help="Get Ray cluster log",
        parents=[common],
        epilog=EXAMPLES,
    )
    p.add_argument("resource", metavar="RAYCLUSTER | TYPE/NAME")
    p.add_argument("--out-dir", default="", help="directory to save the logs to")
    p.add_argument(
        "--node-type",
        choices=("all", "head", "worker"),
        default="all",
        help="type of Ray node from which to download logs",
    )
    p.add_argument(
        "--link",
        choices=("gke",),
        default="",
        help="print a link to a cloud console to view logs, supports: 'gke'",
    )
    p.add_argument(
        "-f",
        "--follow",
        action="store_true",
        help="stream the Ray container output of the head node (of the workers with "
        "--node-type worker) until interrupted, instead of downloading",
    )
    p.set_defaults(handler=log)


async def _text(client: Client, path: str, params: dict[str, str]) -> str:
    headers = await client._headers(None, "*/*")
    async with client.session.get(client.host + path, params=params, headers=headers) as resp:
        body = await resp.read()
        if resp.status >= 400:
            try:
                message = orjson.loads(body).get("message", "")
            except orjson.JSONDecodeError:
                message = body.decode(errors="replace")
            raise CLIError(f"HTTP {resp.status}: {message}")
        return body.decode(errors="replace")


async def exec_stdout(
    client: Client, ns: str, pod: str, container: str, command: list[str]
) -> bytes:
    """Run ``command`` in the container through the apiserver; its stdout (CLIError with
    stderr/status when it fails)."""
    url = (
        f"{client.host}/api/v1/namespaces/{segment('namespace', ns)}"
        f"/pods/{segment('pod name', pod)}/exec"
    )
    url = url.replace("https://", "wss://", 1).replace("http://", "ws://", 1)
    params = [("container", container), ("stdout", "true"), ("stderr", "true")]
    params += [("command", c) for c in command]
    out, err, status = bytearray(), bytearray(), b""
    try:
        async with client.session.ws_connect(
            url,
            params=params,
            protocols=(EXEC_PROTOCOL,),
            headers=await client._headers(None, "*/*"),
        ) as ws:
            async for msg in ws:
                if msg.type != aiohttp.WSMsgType.BINARY or not msg.data:
                    continue
                channel, payload = msg.data[0], msg.data[1:]
                if channel == STDOUT:
                    out += payload
                elif channel == STDERR:
                    err += payload
                elif channel == ERROR:
                    status += payload
    except aiohttp.WSServerHandshakeError as exc:
        raise CLIError(
            f"the apiserver refused to exec into pod {pod} (HTTP {exc.status}); is it running "
            "on a node with a reachable kubelet?"
        ) from exc
    except aiohttp.ClientError as exc:
        raise CLIError(f"exec in {pod} failed: {exc}") from exc
    if status:
        try:
            doc = orjson.loads(status)
        except orjson.JSONDecodeError:
            doc = {"status": "Failure", "message": status.decode(errors="replace")}
        if doc.get("status") != "Success":
            detail = doc.get("message") or err.decode(errors="replace")
            raise CLIError(f"exec in {pod} failed: {detail}")
    return bytes(out)


def extract(tar_bytes: bytes, dest: Path) -> int:
    """Unpack a tar stream under ``dest`` (members escaping it are skipped); file count."""
    count = 0
    with tarfile.open(fileobj=io.BytesIO(tar_bytes)) as tf:
        for member in tf.getmembers():
            target = (dest / member.name).resolve()
            if not target.is_relative_to(dest.resolve()) or not (member.isfile() or member.isdir()):
                continue
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            source = tf.extractfile(member)
            if source is not None:
                target.write_bytes(source.read())
                count += 1
    return count


async def download_node(client: Client, env: Env, pod: Obj, out_dir: Path) -> None:
    """stdout.log and the session logs of one Ray node."""
    ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    container = (k8s.spec(pod).get("containers") or [{}])[0].get("name", "")
    if not k8s.spec(pod).get("nodeName"):
        phase = k8s.status(pod).get("phase") or "Pending"
        cluster = k8s.labels(pod).get(CLUSTER_LABEL, "")
        raise CLIError(
            f"Error retrieving log for Ray cluster node {name}: the pod is {phase} and not on "
            f"a node yet, so it has no logs (kubectl ray why raycluster/{cluster})"
        )
    node_dir = out_dir / name
    node_dir.mkdir(parents=True, exist_ok=True)
    try:
        text = await _text(
            client,
            f"/api/v1/namespaces/{segment('namespace', ns)}/pods/{segment('pod name', name)}/log",
            {"container": container},
        )
    except CLIError as exc:
        raise CLIError(f"Error retrieving log for Ray cluster node {name}: {exc}") from exc
    (node_dir / "stdout.log").write_text(text)
    command = ["tar", "--warning=no-file-changed", "-cf", "-", "-C", LOG_DIR_IN_POD, "."]
    data = await exec_stdout(client, ns, name, container, command)
    files = extract(data, node_dir)
    env.out(f"Downloaded logs of Ray node {name} ({files} files) to {node_dir}")


async def log(env: Env, args: argparse.Namespace) -> None:
    kind, name = parse_type_name(args.resource)
    if args.link and args.out_dir:
        raise CLIError("--out-dir is incompatible with --link")
    if args.follow and (args.out_dir or args.link):
        raise CLIError("--follow is incompatible with --out-dir and --link")
    client = await env.client()
    cluster = await cluster_of(client, kind, name, env.namespace)
    if args.link:
        await print_gke_link(env, client, cluster, args.node_type)
        return
    if args.follow:
        await follow(env, client, cluster, args.node_type)
        return
    out_dir = Path(args.out_dir) if args.out_dir else Path(name)
    created = False
    if not args.out_dir:
        env.out(
            "No output directory specified, creating dir under current directory using "
            "resource name."
        )
        created = not out_dir.exists()
        out_dir.mkdir(parents=True, exist_ok=True)
    elif not out_dir.is_dir():
        raise CLIError(f"{out_dir} does not exist or is not a directory")
    selector = f"{CLUSTER_LABEL}={cluster}"
    if args.node_type != "all":
        selector += f",{NODE_TYPE_LABEL}={args.node_type}"
    pods, _ = await client.list_all("v1", "Pod", env.namespace, label_selector=selector)
    if not pods:
        if created:
            out_dir.rmdir()
        raise CLIError(f"No Ray nodes found for resource {cluster}")
    for pod in pods:
        await download_node(client, env, pod, out_dir)


__all__ = ["LOG_DIR_IN_POD", "download_node", "exec_stdout", "extract", "register"]
