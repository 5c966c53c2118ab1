"""``kubectl ray create cluster|workergroup`` with KubeRay's flags and defaults."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from kuberay.api.v1.constants import API_VERSION
from kuberay.gocompat.quantity import Quantity
from kuberay.kube import NotFound
from kuberay.kube import objects as k8s
from kuberay.kubectl_ray.common import (
    FIELD_MANAGER,
    GOOGLE_TPU,
    NVIDIA_GPU,
    RAY_IMAGE,
    RAY_IMAGE_REPO,
    RAY_VERSION,
    condition_true,
    key_values,
    merge_maps,
    validate_quantity,
)
from kuberay.kubectl_ray.context import CLIError, Env
from kuberay.kubectl_ray.generation import (
    DEFAULT_GROUP,
    generate_raycluster,
    parse_config_file,
    validate_config,
    validate_tpu,
)
from kuberay.kubectl_ray.output import dump
from kuberay.kubectl_ray.progress import pods_ready, wanted_pods
from kuberay.kubectl_ray.waiting import parse_duration, poll

if TYPE_CHECKING:
    from kuberay.kube.objects import Object as Obj

#: Flags allowed next to ``--file`` (they do not describe the cluster).
ALLOWED_WITH_FILE = {"file", "context", "namespace", "kubeconfig", "dry_run", "wait", "timeout"}

_CLUSTER_FLAGS: list[tuple[str, Any, str]] = [
    ("--ray-version", RAY_VERSION, "Ray version to use"),
    ("--image", RAY_IMAGE, "container image to use"),
    ("--head-cpu", "2", "number of CPUs in the Ray head"),
    ("--head-memory", "4Gi", "amount of memory in the Ray head"),
    ("--head-gpu", "0", "number of GPUs in the Ray head"),
    ("--head-ephemeral-storage", "", "amount of ephemeral storage in the Ray head"),
    ("--worker-cpu", "2", "number of CPUs in each worker group replica"),
    ("--worker-memory", "4Gi", "amount of memory in each worker group replica"),
    ("--worker-gpu", "0", "number of GPUs in each worker group replica"),
    ("--worker-ephemeral-storage", "", "amount of ephemeral storage in each worker group replica"),
    ("--worker-tpu", "0", "number of TPUs in each worker group replica"),
]


class _Tracked(argparse.Action):
    """Stores the value and remembers that the flag was given (pflag's Changed)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        if self.nargs == 0:
            values = True
        if isinstance(getattr(namespace, self.dest, None), list) and self.default == []:
            values = [*getattr(namespace, self.dest), values]
        setattr(namespace, self.dest, values)
        changed = set(getattr(namespace, "changed", set()))
        changed.add(self.dest)
        namespace.changed = changed


def _map_flag(p: argparse.ArgumentParser, flag: str, help_text: str) -> None:
    p.add_argument(flag, type=key_values, action=_Tracked, default=[], help=help_text)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``create cluster`` and ``create workergroup``."""
    create = sub.add_parser("create", help="Create Ray resources", parents=[common])
    kinds = create.add_subparsers(dest="resource", metavar="RESOURCE", required=True)

    p = kinds.add_parser("cluster", help="Create Ray cluster", parents=[common])
    p.set_defaults(changed=set(), handler=create_cluster)
    p.add_argument("name", nargs="?", default="")
    _map_flag(p, "--labels", "K8s labels (e.g. --labels app=ray,env=dev)")
    _map_flag(p, "--annotations", "K8s annotations (e.g. --annotations ttl-hours=24)")
    for flag, default, help_text in _CLUSTER_FLAGS:
        p.add_argument(flag, default=default, action=_Tracked, help=help_text)
    _map_flag(p, "--head-ray-start-params", "arguments of the head's 'ray start'")
    _map_flag(p, "--head-node-selectors", "node selectors of the head pod")
    _map_flag(p, "--worker-ray-start-params", "arguments of the workers' 'ray start'")
    _map_flag(p, "--worker-node-selectors", "node selectors of the worker pods")
    p.add_argument(
        "--worker-replicas", type=int, default=1, action=_Tracked, help="desired worker replicas"
    )
    p.add_argument(
        "--num-of-hosts",
        type=int,
        default=1,
        action=_Tracked,
        help="number of hosts in default worker group per replica",
    )
    p.add_argument(
        "--autoscaler",
        type=str.lower,
        choices=["v1", "v2"],
        default="",
        action=_Tracked,
        help='autoscaler to use, supports: "v1", "v2"',
    )
    p.add_argument(
        "--file", default="", action=_Tracked, help="path to a YAML file with the cluster config"
    )
    p.add_argument(
        "--dry-run",
        nargs=0,
        default=False,
        action=_Tracked,
        help="print the generated YAML instead of creating the cluster",
    )
    p.add_argument(
        "--wait",
        nargs=0,
        default=False,
        action=_Tracked,
        help="wait for the cluster to be provisioned before returning",
    )
    p.add_argument("--timeout", default="5m", action=_Tracked, help="the timeout for --wait")

    p = kinds.add_parser(
        "workergroup",
        help="Create worker group in an existing Ray cluster",
        parents=[common],
    )
    p.set_defaults(changed=set(), handler=create_workergroup)
    p.add_argument("group")
    p.add_argument(
        "-c", "--ray-cluster", required=True, help="Ray cluster to add a worker group to"
    )
    p.add_argument("--ray-version", default=RAY_VERSION, help="Ray version to use")
    p.add_argument("--image", default=RAY_IMAGE, help="container image to use")
    p.add_argument("--worker-replicas", type=int, default=1, help="desired replicas")
    p.add_argument("--num-of-hosts", type=int, default=1, help="hosts per replica")
    p.add_argument("--worker-min-replicas", type=int, default=1, help="minimum replicas")
    p.add_argument("--worker-max-replicas", type=int, default=10, help="maximum replicas")
    p.add_argument("--worker-cpu", default="2", help="number of CPUs in each replica")
    p.add_argument("--worker-gpu", default="0", help="number of GPUs in each replica")
    p.add_argument("--worker-tpu", default="0", help="number of TPUs in each replica")
    p.add_argument("--worker-memory", default="4Gi", help="amount of memory in each replica")
    _map_flag(p, "--worker-ray-start-params", "arguments of the workers' 'ray start'")
    _map_flag(p, "--worker-node-selectors", "node selectors of this group's pods")


# ----- create cluster --------------------------------------------------------------------
def config_from_flags(args: argparse.Namespace, namespace: str) -> Obj:
    """The plugin config the ``create cluster`` flags describe."""
    image = args.image or f"{RAY_IMAGE_REPO}:{args.ray_version}"
    if image == RAY_IMAGE and args.ray_version != RAY_VERSION:
        image = f"{RAY_IMAGE_REPO}:{args.ray_version}"
    return {
        "namespace": namespace,
        "name": args.name,
        "labels": merge_maps(args.labels),
        "annotations": merge_maps(args.annotations),
        "ray-version": args.ray_version,
        "image": image,
        "head": {
            "cpu": args.head_cpu,
            "memory": args.head_memory,
            "ephemeral-storage": args.head_ephemeral_storage,
            "gpu": args.head_gpu,
            "ray-start-params": merge_maps(args.head_ray_start_params),
            "node-selectors": merge_maps(args.head_node_selectors),
        },
        "worker-groups": [
            {
                "name": DEFAULT_GROUP,
                "replicas": args.worker_replicas,
                "num-of-hosts": args.num_of_hosts,
                "cpu": args.worker_cpu,
                "memory": args.worker_memory,
                "ephemeral-storage": args.worker_ephemeral_storage,
                "gpu": args.worker_gpu,
                "tpu": args.worker_tpu,
                "ray-start-params": merge_maps(args.worker_ray_start_params),
                "node-selectors": merge_maps(args.worker_node_selectors),
            }
        ],
        "autoscaler": {"version": args.autoscaler} if args.autoscaler else None,
    }


def resolve_config(env: Env, args: argparse.Namespace) -> Obj:
    """Validate the flags (or the ``--file`` config) and return the config to create."""
    if args.file:
        bad = sorted(c.replace("_", "-") for c in args.changed - ALLOWED_WITH_FILE)
        if bad:
            raise CLIError(f"the following flags are incompatible with --file: {bad}")
        config = parse_config_file(args.file)
        validate_config(config)
        name = config.get("name") or ""
        if name and args.name and name != args.name:
            raise CLIError(
                f'the cluster name in the config file "{name}" does not match the cluster '
                f'name "{args.name}". You must use the same name to perform this operation'
            )
        config["name"] = args.name or name
        if not config["name"]:
            raise CLIError("the cluster name is required")
        file_ns = config.get("namespace") or ""
        if env.namespace_explicit and file_ns and file_ns != env.namespace:
            raise CLIError(
                f'the namespace in the config file "{file_ns}" does not match the namespace '
                f'"{env.namespace}". You must pass --namespace={file_ns} to perform this operation'
            )
        config["namespace"] = file_ns or env.namespace
        return config
    if not args.name:
        raise CLIError("cluster [CLUSTERNAME]: the cluster name is required")
    for flag in (
        "head_cpu",
        "head_gpu",
        "head_memory",
        "head_ephemeral_storage",
        "worker_cpu",
        "worker_gpu",
        "worker_tpu",
        "worker_memory",
        "worker_ephemeral_storage",
    ):
        value = getattr(args, flag)
        if value != "" or flag in args.changed:
            validate_quantity(value, flag.replace("_", "-"))
    validate_tpu(args.worker_tpu, args.num_of_hosts, merge_maps(args.worker_node_selectors))
    return config_from_flags(args, env.namespace)


async def wait_provisioned(env: Env, namespace: str, name: str, timeout: float) -> None:
    """Until condition RayClusterProvisioned is True or state is ready (progress on stderr)."""
    client = await env.client()

    async def probe() -> tuple[bool | None, str]:
        cluster = await client.get(API_VERSION, "RayCluster", name, namespace)
        status = k8s.status(cluster)
        if condition_true(cluster, "RayClusterProvisioned") or status.get("state") == "ready":
            return True, ""
        ready = await pods_ready(client, namespace, name)
        return None, (
            f"Waiting for Ray cluster {name}: pods ready {ready}/{wanted_pods(cluster)}, "
            f"state={status.get('state') or 'pending'}, "
            f"available workers {status.get('availableWorkerReplicas', 0)}/"
            f"{status.get('desiredWorkerReplicas', 0)}"
        )

    try:
        await poll(env, probe, timeout=timeout, what=f"Ray cluster {name} to be provisioned")
    except CLIError as exc:
        raise CLIError(
            f"timed out waiting for Ray cluster {name} in namespace {namespace} to be "
            f"provisioned; run `kubectl ray why raycluster/{name} -n {namespace}` ({exc})"
        ) from exc


async def create_cluster(env: Env, args: argparse.Namespace) -> None:
    config = resolve_config(env, args)
    body = generate_raycluster(config)
    if args.dry_run:
        env.stdout.write(dump(body, "yaml") + "\n")
        return
    try:
        timeout = parse_duration(args.timeout)
    except ValueError as exc:
        raise CLIError(f"--timeout: {exc}") from exc
    client = await env.client()
    ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
    try:
        await client.get(API_VERSION, "RayCluster", name, ns)
    except NotFound:
        pass
    else:
        raise CLIError(f"the Ray cluster {name} in namespace {ns} already exists")
    result = await client.apply(body, field_manager=FIELD_MANAGER)
    env.out(f"Created Ray cluster: {result['metadata']['name']}")
    if args.wait:
        await wait_provisioned(env, ns, name, timeout)
        env.out(f"Ray cluster {name} is provisioned")


# ----- create workergroup ----------------------------------------------------------------
def workergroup_spec(args: argparse.Namespace) -> Obj:
    """The WorkerGroupSpec ``create workergroup`` appends (KubeRay: CPU and memory as
    both request and limit; GPU/TPU added when not zero)."""
    requests: dict[str, str] = {"cpu": args.worker_cpu, "memory": args.worker_memory}
    limits = dict(requests)
    for name, value in ((NVIDIA_GPU, args.worker_gpu), (GOOGLE_TPU, args.worker_tpu)):
        if not Quantity.parse(value).is_zero():
            requests[name] = value
            limits[name] = value
    pod: Obj = {
        "containers": [
            {
                "name": "ray-worker",
                "image": args.image,
                "resources": {"requests": requests, "limits": limits},
            }
        ]
    }
    selectors = merge_maps(args.worker_node_selectors)
    if selectors:
        pod["nodeSelector"] = selectors
    return {
        "groupName": args.group,
        "replicas": args.worker_replicas,
        "numOfHosts": args.num_of_hosts,
        "minReplicas": args.worker_min_replicas,
        "maxReplicas": args.worker_max_replicas,
        "rayStartParams": merge_maps(args.worker_ray_start_params),
        "template": {"spec": pod},
    }


async def create_workergroup(env: Env, args: argparse.Namespace) -> None:
    validate_tpu(args.worker_tpu, args.num_of_hosts, merge_maps(args.worker_node_selectors))
    for flag in ("worker_cpu", "worker_gpu", "worker_tpu", "worker_memory"):
        validate_quantity(getattr(args, flag), flag.replace("_", "-"))
    client = await env.client()
    try:
        cluster = await client.get(API_VERSION, "RayCluster", args.ray_cluster, env.namespace)
    except NotFound as exc:
        raise CLIError(f"error getting Ray cluster: {exc.message}") from exc
    groups = k8s.spec(cluster).get("workerGroupSpecs") or []
    if any(g.get("groupName") == args.group for g in groups):
        raise CLIError(
            f"worker group {args.group} already exists in Ray cluster {args.ray_cluster}"
        )
    # A JSON patch with a resourceVersion test: only the new group is written, and a
    # concurrent change makes it fail instead of being overwritten.
    patch = [
        {
            "op": "test",
            "path": "/metadata/resourceVersion",
            "value": cluster["metadata"]["resourceVersion"],
        },
        {
            "op": "add",
            "path": "/spec/workerGroupSpecs/-" if groups else "/spec/workerGroupSpecs",
            "value": workergroup_spec(args) if groups else [workergroup_spec(args)],
        },
    ]
    updated = await client.patch(
        API_VERSION,
        "RayCluster",
        args.ray_cluster,
        patch,
        env.namespace,
        patch_type="json",
        field_manager=FIELD_MANAGER,
    )
    env.out(
        f"Updated Ray cluster {updated['metadata']['namespace']}/{updated['metadata']['name']} "
        "with new worker group"
    )


__all__ = [
    "config_from_flags",
    "create_cluster",
    "create_workergroup",
    "register",
    "resolve_config",
    "wait_provisioned",
    "workergroup_spec",
]
