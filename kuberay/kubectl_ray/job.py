"""``kubectl ray job submit``: create an InteractiveMode RayJob (generated from flags,
or ``-f`` YAML), wait for its RayCluster, upload the working directory and submit the
entrypoint through the Ray dashboard's job API, then follow the logs until the job
ends (``--no-wait``: return once submitted).

No ``ray`` CLI is needed: the working directory is zipped and uploaded as a
``gcs://_ray_pkg_<hash>.zip`` package, as ``ray job submit`` does. The dashboard is
``--address`` or a port-forward to the head pod through the apiserver.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import io
import json
import os
import secrets
import string
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
import yaml

from kuberay.api.v1.constants import API_VERSION
from kuberay.api.v1.enums import JobSubmissionMode
from kuberay.api.v1.rules import submission_mode
from kuberay.kube import ApiError
from kuberay.kube import objects as k8s
from kuberay.kube.paths import segment
from kuberay.kubectl_ray.common import (
    FIELD_MANAGER,
    RAY_IMAGE,
    RAY_VERSION,
    condition_true,
    key_values,
    merge_maps,
    validate_quantity,
)
from kuberay.kubectl_ray.context import CLIError, Env
from kuberay.kubectl_ray.generation import generate_rayjob
from kuberay.kubectl_ray.output import dump
from kuberay.kubectl_ray.portforward import bind_local, serve_forward
from kuberay.kubectl_ray.progress import pods_ready, wanted_pods
from kuberay.kubectl_ray.session import DASHBOARD, head_pod
from kuberay.kubectl_ray.waiting import poll

if TYPE_CHECKING:
    from kuberay.kube.objects import Object as Obj

CLUSTER_TIMEOUT = 120.0
TERMINAL = {"SUCCEEDED", "FAILED", "STOPPED"}


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``job submit``."""
    job = sub.add_parser("job", help="Ray job commands", parents=[common])
    cmds = job.add_subparsers(dest="job_command", metavar="COMMAND", required=True)
    p = cmds.add_parser(
        "submit",
        help="Submit Ray job to Ray cluster",
        usage="kubectl ray job submit [OPTIONS] [-f RAYJOB_YAML] -- ENTRYPOINT",
        parents=[common],
    )
    p.add_argument("-f", "--filename", default="", help="Path and name of the Ray Job YAML file")
    p.add_argument("--address", default=None, help="Ray Dashboard base URL; skips port-forwarding")
    p.add_argument("--submission-id", default="", help="ID for the Ray job (generated if unset)")
    p.add_argument("--runtime-env", default="", help="Path to the runtime env YAML file")
    p.add_argument("--working-dir", default="", help="Directory containing files the job runs in")
    p.add_argument("--headers", default="", help="JSON headers for the dashboard requests")
    p.add_argument("--runtime-env-json", default="", help="JSON-serialized runtime_env")
    p.add_argument("--verify", default="", help="verify the dashboard's TLS certificate")
    p.add_argument("--entrypoint-resources", default="", help="JSON resource dictionary")
    p.add_argument("--metadata-json", default="", help="JSON metadata for the job")
    p.add_argument("--log-style", default="", help="accepted for compatibility")
    p.add_argument("--log-color", default="", help="accepted for compatibility")
    p.add_argument("--entrypoint-num-cpus", type=float, default=0.0)
    p.add_argument("--entrypoint-num-gpus", type=float, default=0.0)
    p.add_argument("--entrypoint-memory", type=int, default=0)
    p.add_argument("--no-wait", action="store_true", help="do not stream logs and wait")
    p.add_argument("--name", default="", help="Ray job name")
    p.add_argument("--ray-version", default=RAY_VERSION, help="Ray version to use")
    p.add_argument("--image", default=RAY_IMAGE, help="container image to use")
    p.add_argument("--head-cpu", default="2")
    p.add_argument("--head-memory", default="4Gi")
    p.add_argument("--head-gpu", default="0")
    p.add_argument("--worker-replicas", type=int, default=1)
    p.add_argument("--worker-cpu", default="2")
    p.add_argument("--worker-memory", default="4Gi")
    p.add_argument("--worker-gpu", default="0")
    p.add_argument("--dry-run", action="store_true", help="print the generated RayJob")
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument("--head-node-selectors", type=key_values, action="append", default=[])
    p.add_argument("--worker-node-selectors", type=key_values, action="append", default=[])
    p.add_argument("--ttl-seconds-after-finished", type=int, default=None)
    p.add_argument("--cluster-timeout", type=float, default=CLUSTER_TIMEOUT, help="seconds")
    p.set_defaults(handler=submit)


def submission_id() -> str:
    """``raysubmit_`` + 16 random letters/digits, as Ray generates them."""
    alphabet = string.ascii_letters + string.digits
    return "raysubmit_" + "".join(secrets.choice(alphabet) for _ in range(16))


def package_working_dir(path: str) -> tuple[str, bytes]:
    """``(gcs://_ray_pkg_<sha1>.zip, zip bytes)`` of a directory."""
    root = Path(path)
    if not root.is_dir():
        raise CLIError(f"working directory {path} does not exist or is not a directory")
    buf = io.BytesIO()
    digest = hashlib.sha1()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for file in sorted(p for p in root.rglob("*") if p.is_file()):
            rel = file.relative_to(root).as_posix()
            data = file.read_bytes()
            digest.update(rel.encode() + b"\0" + data)
            zf.writestr(rel, data)
    return f"gcs://_ray_pkg_{digest.hexdigest()}.zip", buf.getvalue()


def _json_flag(text: str, flag: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CLIError(f"{flag} is not valid JSON: {exc}") from exc


def validate(args: argparse.Namespace) -> Obj | None:
    """KubeRay's checks; the RayJob read from ``-f`` (or None)."""
    if not args.entrypoint:
        raise CLIError("an entrypoint is required: kubectl ray job submit [OPTIONS] -- ENTRYPOINT")
    runtime_env: Obj = {}
    if args.runtime_env:
        path = Path(args.runtime_env)
        if not path.is_file():
            raise CLIError(f"Runtime Env file does not exist: {args.runtime_env}")
        runtime_env = yaml.safe_load(path.read_text()) or {}
        if runtime_env.get("working_dir") and not args.working_dir:
            args.working_dir = str(runtime_env["working_dir"])
    if args.ttl_seconds_after_finished is not None and args.ttl_seconds_after_finished < 0:
        raise CLIError("--ttl-seconds-after-finished must be greater than or equal to 0")
    rayjob: Obj | None = None
    if args.filename:
        path = Path(args.filename)
        if not path.is_file():
            raise CLIError(f"Ray Job file does not exist: {args.filename}")
        rayjob = yaml.safe_load(path.read_text())
        spec = (rayjob or {}).get("spec") or {}
        if submission_mode(spec) != JobSubmissionMode.INTERACTIVE_MODE:
            raise CLIError("Submission mode of the Ray Job must be set to 'InteractiveMode'")
        if (spec.get("backoffLimit") or 0) > 0:
            raise CLIError("BackoffLimit is incompatible with InteractiveMode")
        if not args.runtime_env and not args.runtime_env_json and spec.get("runtimeEnvYAML"):
            args.runtime_env_json = json.dumps(yaml.safe_load(spec["runtimeEnvYAML"]))
        if args.ttl_seconds_after_finished is not None:
            spec["ttlSecondsAfterFinished"] = args.ttl_seconds_after_finished
            spec["shutdownAfterJobFinishes"] = True
        if (
            not spec.get("shutdownAfterJobFinishes")
            and (spec.get("ttlSecondsAfterFinished") or 0) > 0
        ):
            raise CLIError(
                "ttlSecondsAfterFinished is only supported when shutdownAfterJobFinishes is set "
                "to true"
            )
    elif not args.name.strip():
        raise CLIError("Must set either yaml file (--filename) or set Ray job name (--name)")
    if not args.working_dir:
        raise CLIError("working directory is required, use --working-dir or set with runtime env")
    for flag in (
        "head_cpu",
        "head_gpu",
        "head_memory",
        "worker_cpu",
        "worker_gpu",
        "worker_memory",
    ):
        validate_quantity(getattr(args, flag), flag.replace("_", "-"))
    if args.address is not None and not args.address.strip():
        raise CLIError("--address was provided but is empty")
    args.runtime_env_obj = runtime_env
    return rayjob


def build_rayjob(env: Env, args: argparse.Namespace, rayjob: Obj | None, job_id: str) -> Obj:
    """The RayJob to create."""
    if rayjob is not None:
        obj = dict(rayjob)
        obj.setdefault("metadata", {})["namespace"] = env.namespace
        obj["spec"]["jobId"] = job_id
        return obj
    config = {
        "ray-version": args.ray_version,
        "image": args.image,
        "head": {
            "cpu": args.head_cpu,
            "memory": args.head_memory,
            "gpu": args.head_gpu,
            "node-selectors": merge_maps(args.head_node_selectors),
        },
        "worker-groups": [
            {
                "replicas": args.worker_replicas,
                "cpu": args.worker_cpu,
                "memory": args.worker_memory,
                "gpu": args.worker_gpu,
                "node-selectors": merge_maps(args.worker_node_selectors),
            }
        ],
    }
    ttl = args.ttl_seconds_after_finished
    return generate_rayjob(
        args.name,
        env.namespace,
        " ".join(args.entrypoint),
        config,
        job_id=job_id,
        shutdown_after_job_finishes=ttl is not None,
        ttl_seconds_after_finished=ttl or 0,
    )


async def wait_cluster(env: Env, job_name: str, timeout: float) -> str:
    """The RayCluster of the RayJob once it is ready (progress on stderr)."""
    client = await env.client()

    async def probe() -> tuple[str | None, str]:
        job = await client.get(API_VERSION, "RayJob", job_name, env.namespace)
        job_status = k8s.status(job)
        state = f"RayJob {job_name}: {job_status.get('jobDeploymentStatus') or 'New'}"
        cluster_name = job_status.get("rayClusterName")
        if not cluster_name:
            return None, f"{state}, waiting for the operator to create the RayCluster..."
        try:
            cluster = await client.get(API_VERSION, "RayCluster", cluster_name, env.namespace)
        except ApiError:
            return None, f"{state}, waiting for RayCluster {cluster_name}..."
        status = k8s.status(cluster)
        if status.get("state") == "ready" or condition_true(cluster, "RayClusterProvisioned"):
            return str(cluster_name), ""
        ready = await pods_ready(client, env.namespace, str(cluster_name))
        return (
            None,
            f"{state}, cluster {cluster_name} pods ready {ready}/{wanted_pods(cluster)} "
            f"(state={status.get('state') or 'pending'})",
        )

    return await poll(env, probe, timeout=timeout, what=f"the RayCluster of RayJob {job_name}")


class Dashboard:
    """Minimal Ray dashboard job API client."""

    def __init__(self, address: str, headers: dict[str, str], verify: bool) -> None:
        self.address = address.rstrip("/")
        self.session = aiohttp.ClientSession(
            headers=headers, connector=aiohttp.TCPConnector(ssl=verify)
        )

    async def close(self) -> None:
        await self.session.close()

    async def _json(self, method: str, path: str, **kw: Any) -> Any:
        try:
            async with self.session.request(method, self.address + path, **kw) as resp:
                text = await resp.text()
                if resp.status >= 400:
                    raise CLIError(
                        f"Ray dashboard {method} {path}: HTTP {resp.status}: {text[:500]}"
                    )
                return json.loads(text) if text else None
        except aiohttp.ClientError as exc:
            raise CLIError(f"cannot reach the Ray dashboard at {self.address}: {exc}") from exc

    async def upload(self, uri: str, data: bytes) -> None:
        path = "/api/packages/gcs/" + uri.removeprefix("gcs://")
        async with self.session.get(self.address + path) as resp:
            if resp.status == 200:
                return
        await self._json("PUT", path, data=data)

    async def submit(self, body: Obj) -> Obj:
        result: Obj = await self._json("POST", "/api/jobs/", json=body)
        return result

    async def status(self, job_id: str) -> Obj:
        result: Obj = await self._json("GET", f"/api/jobs/{segment('job id', job_id)}")
        return result

    async def logs(self, job_id: str) -> str:
        result = await self._json("GET", f"/api/jobs/{segment('job id', job_id)}/logs")
        return str((result or {}).get("logs", ""))


async def _port_forward(env: Env, cluster: str) -> tuple[str, Any]:
    client = await env.client()
    sock = bind_local(0, "dashboard port-forward")
    port = sock.getsockname()[1]

    async def resolve() -> str:
        return await head_pod(client, env.namespace, cluster)

    await resolve()
    server = await serve_forward(client, env.namespace, resolve, sock, DASHBOARD, env.err)
    return f"http://127.0.0.1:{port}", server


async def submit(env: Env, args: argparse.Namespace) -> int:
    rayjob = validate(args)
    job_id = args.submission_id or submission_id()
    if not args.submission_id:
        env.out(f"Generated submission ID for Ray job: {job_id}")
    body = build_rayjob(env, args, rayjob, job_id)
    if args.dry_run and rayjob is None:
        env.stdout.write(dump(body, "yaml") + "\n")
        return 0
    client = await env.client()
    if rayjob is None:
        created = await client.apply(body, field_manager=FIELD_MANAGER)
    else:
        created = await client.create(body, field_manager=FIELD_MANAGER)
    name = created["metadata"]["name"]
    env.out(f"Submitted RayJob {name}.")
    env.out("Waiting for RayCluster")
    try:
        cluster = await wait_cluster(env, name, args.cluster_timeout)
    except CLIError:
        env.out("Deleting RayJob...")
        await client.delete(API_VERSION, "RayJob", name, env.namespace)
        env.out(f"Cleaned Up RayJob: {name}")
        raise CLIError(f"Timed out waiting for cluster (kubectl ray why rayjob/{name})") from None
    server = None
    if args.address:
        address = args.address
        env.out(f"Using address {address} (no port-forwarding)")
    else:
        address, server = await _port_forward(env, cluster)
        env.out(f"Port forwarding started on {address}")
    headers = _json_flag(args.headers, "--headers") if args.headers else {}
    dashboard = Dashboard(address, headers, verify=args.verify.lower() not in ("false", "0"))
    try:
        return await _submit_and_follow(env, args, dashboard, job_id, name)
    finally:
        await dashboard.close()
        if server is not None:
            server.close()


async def _submit_and_follow(
    env: Env, args: argparse.Namespace, dashboard: Dashboard, job_id: str, rayjob: str
) -> int:
    runtime_env: Obj = dict(args.runtime_env_obj)
    if args.runtime_env_json:
        runtime_env.update(_json_flag(args.runtime_env_json, "--runtime-env-json"))
    uri, data = package_working_dir(os.path.expanduser(args.working_dir))
    env.err(f"Uploading working directory {args.working_dir} as {uri} ({len(data)} bytes)")
    await dashboard.upload(uri, data)
    runtime_env["working_dir"] = uri
    request: Obj = {
        "entrypoint": " ".join(args.entrypoint),
        "submission_id": job_id,
        "runtime_env": runtime_env,
    }
    if args.metadata_json:
        request["metadata"] = _json_flag(args.metadata_json, "--metadata-json")
    if args.entrypoint_resources:
        request["entrypoint_resources"] = _json_flag(
            args.entrypoint_resources, "--entrypoint-resources"
        )
    for key, value in (
        ("entrypoint_num_cpus", args.entrypoint_num_cpus),
        ("entrypoint_num_gpus", args.entrypoint_num_gpus),
        ("entrypoint_memory", args.entrypoint_memory),
    ):
        if value:
            request[key] = value
    await dashboard.submit(request)
    if args.no_wait:
        env.out(f"Ray job submitted with ID {job_id}")
        return 0
    env.out("Waiting for job to finish...")
    printed = 0
    status = ""
    while True:
        info = await dashboard.status(job_id)
        logs = await dashboard.logs(job_id)
        if len(logs) > printed:
            env.stdout.write(logs[printed:])
            env.stdout.flush()
            printed = len(logs)
        new = str(info.get("status", ""))
        if new != status:
            status = new
            env.out(f"Current status: {status} (RayJob: {rayjob}, JobID: {job_id})")
        if status in TERMINAL:
            break
        await asyncio.sleep(1.0)
    env.out(f"Job {job_id} {status}")
    return 0 if status == "SUCCEEDED" else 1


__all__ = [
    "Dashboard",
    "build_rayjob",
    "package_working_dir",
    "register",
    "submission_id",
    "submit",
    "validate",
]
