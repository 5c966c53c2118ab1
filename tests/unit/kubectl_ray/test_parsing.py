"""Flag parsing and generated objects of ``create``/``scale``/``delete``/``render``, offline."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from kuberay.kube.errors import ConfigError as KubeconfigError
from kuberay.kubectl_ray import run
from kuberay.kubectl_ray.common import parse_type_name
from kuberay.kubectl_ray.connection import ConnectionFlags, load, namespace_of
from kuberay.kubectl_ray.context import CLIError, context_namespace
from tests.kuberay_samples import KUBERAY_SAMPLES as SAMPLES
from tests.kuberay_samples import requires_kuberay_samples


async def cli(*argv: str, kubeconfig: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = await run(["--kubeconfig", str(kubeconfig), *argv], stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def kubeconfig(tmp_path: Path) -> Path:
    path = tmp_path / "config"
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "dev",
                "contexts": [
                    {
                        "name": "dev",
                        "context": {"cluster": "c", "user": "u", "namespace": "team-a"},
                    },
                    {"name": "other", "context": {"cluster": "c", "user": "u"}},
                ],
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                "users": [{"name": "u", "user": {"token": "x"}}],
            }
        )
    )
    return path


def test_namespace_comes_from_the_context(kubeconfig: Path) -> None:
    assert context_namespace(ConnectionFlags(kubeconfig=str(kubeconfig))) == "team-a"
    other = ConnectionFlags(kubeconfig=str(kubeconfig), context="other")
    assert context_namespace(other) == "default"
    nope = ConnectionFlags(kubeconfig=str(kubeconfig), context="nope")
    with pytest.raises(KubeconfigError, match='not found for specified context: "nope"'):
        namespace_of(nope, load(nope))


async def test_create_cluster_dry_run_defaults(kubeconfig: Path) -> None:
    code, out, _ = await cli("create", "cluster", "demo", "--dry-run", kubeconfig=kubeconfig)
    assert code == 0
    rc = yaml.safe_load(out)
    assert rc["metadata"] == {"name": "demo", "namespace": "team-a"}
    head = rc["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert head["image"] == "rayproject/ray:2.52.0"
    assert head["resources"] == {
        "limits": {"memory": "4Gi"},
        "requests": {"cpu": "2", "memory": "4Gi"},
    }
    group = rc["spec"]["workerGroupSpecs"][0]
    assert group["groupName"] == "default-group" and group["replicas"] == 1
    assert "enableInTreeAutoscaling" not in rc["spec"]


async def test_create_cluster_flags(kubeconfig: Path) -> None:
    code, out, _ = await cli(
        "create", "cluster", "demo", "-n", "ns1", "--dry-run", "--ray-version", "2.40.0",
        "--head-gpu", "1", "--worker-replicas", "3", "--worker-memory", "8Gi",
        "--labels", "app=ray,env=dev", "--annotations", "owner=me",
        "--worker-node-selectors", "pool=gpu", "--autoscaler", "v2",
        kubeconfig=kubeconfig,
    )  # fmt: skip
    assert code == 0
    rc = yaml.safe_load(out)
    assert rc["metadata"]["namespace"] == "ns1"
    assert rc["metadata"]["labels"] == {"app": "ray", "env": "dev"}
    assert rc["metadata"]["annotations"] == {"owner": "me"}
    head = rc["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    assert head["image"] == "rayproject/ray:2.40.0"  # the image follows --ray-version
    assert head["resources"]["requests"]["nvidia.com/gpu"] == "1"
    group = rc["spec"]["workerGroupSpecs"][0]
    assert group["replicas"] == 3
    assert group["template"]["spec"]["nodeSelector"] == {"pool": "gpu"}
    assert group["template"]["spec"]["containers"][0]["resources"]["limits"] == {"memory": "8Gi"}
    assert rc["spec"]["autoscalerOptions"] == {"version": "v2"}


async def test_create_cluster_from_file(kubeconfig: Path, tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        "name: fromfile\nhead:\n  cpu: '3'\n"
        "worker-groups:\n- name: a\n  replicas: 2\n- replicas: 1\n"
    )
    code, out, err = await cli(
        "create", "cluster", "--file", str(config), "--dry-run", kubeconfig=kubeconfig
    )
    assert code == 0, err
    rc = yaml.safe_load(out)
    assert rc["metadata"]["name"] == "fromfile"
    assert [g["groupName"] for g in rc["spec"]["workerGroupSpecs"]] == ["a", "default-group-1"]
    code, _, err = await cli(
        "create", "cluster", "--file", str(config), "--head-cpu", "1", kubeconfig=kubeconfig
    )
    assert code == 1 and "incompatible with --file: ['head-cpu']" in err


async def test_create_cluster_rejects_bad_quantity_and_tpu(kubeconfig: Path) -> None:
    code, _, err = await cli("create", "cluster", "x", "--head-cpu", "lots", kubeconfig=kubeconfig)
    assert code == 1 and err.startswith("Error: head-cpu is not a valid resource quantity")
    code, _, err = await cli("create", "cluster", "x", "--worker-tpu", "4", kubeconfig=kubeconfig)
    assert code == 1 and "cloud.google.com/gke-tpu-accelerator is not set" in err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ([], "must specify at least one of --replicas"),
        (["--min-replicas", "5", "--max-replicas", "3"], "--min-replicas (5) cannot be greater"),
        (
            ["-r", "1", "--min-replicas", "2"],
            "--replicas (1) cannot be less than --min-replicas (2)",
        ),
        (["-r", "-3"], "--replicas must be a non-negative integer"),
    ],
)
async def test_scale_validation(kubeconfig: Path, flags: list[str], message: str) -> None:
    code, _, err = await cli("scale", "cluster", "c", "-w", "g", *flags, kubeconfig=kubeconfig)
    assert code == 1 and message in err


def test_type_name_parsing() -> None:
    assert parse_type_name("demo") == ("RayCluster", "demo")
    assert parse_type_name("RayJob/j") == ("RayJob", "j")
    with pytest.raises(CLIError, match="unsupported resource type"):
        parse_type_name("pod/x")
    with pytest.raises(CLIError, match="invalid resource type/name"):
        parse_type_name("rayjob/")


async def test_usage_error_exits_2(kubeconfig: Path) -> None:
    code, _, _ = await cli("scale", "cluster", kubeconfig=kubeconfig)
    assert code == 2


@requires_kuberay_samples
async def test_render_sample_offline(kubeconfig: Path) -> None:
    code, out, err = await cli(
        "render", "-f", str(SAMPLES / "ray-cluster.autoscaler.yaml"), kubeconfig=kubeconfig
    )
    assert code == 0, err
    kinds = [d["kind"] for d in yaml.safe_load_all(out)]
    # Autoscaler RBAC first, then the head Service, then pods (the controller's order).
    assert kinds[:4] == ["ServiceAccount", "Role", "RoleBinding", "Service"]
    pods = [d for d in yaml.safe_load_all(out) if d["kind"] == "Pod"]
    head = pods[0]
    assert head["metadata"]["labels"]["ray.io/node-type"] == "head"
    assert any(c["name"] == "autoscaler" for c in head["spec"]["containers"])


@requires_kuberay_samples
async def test_render_invalid_spec_is_refused(kubeconfig: Path, tmp_path: Path) -> None:
    doc = yaml.safe_load((SAMPLES / "ray-cluster.sample.yaml").read_text())
    doc["spec"]["workerGroupSpecs"][0].update({"minReplicas": 5, "maxReplicas": 1})
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(doc))
    code, out, err = await cli("render", "-f", str(path), kubeconfig=kubeconfig)
    assert code == 1 and out == ""
    assert "workerGroupSpecs[0]" in err and "Traceback" not in err


async def test_render_unsupported_kind_names_it(kubeconfig: Path, tmp_path: Path) -> None:
    path = tmp_path / "svc.yaml"
    path.write_text("apiVersion: ray.io/v1\nkind: RayCronJob\nmetadata: {name: x}\nspec: {}\n")
    code, _, err = await cli("render", "-f", str(path), kubeconfig=kubeconfig)
    assert code == 1 and "rendering RayCronJob is not supported yet" in err


async def test_render_extension_point(kubeconfig: Path, tmp_path: Path) -> None:
    """A kind registered later (the RayJob controller's renderer) is used by the CLI."""
    from kuberay.controllers import render as registry

    def fake(obj: dict[str, object], options: registry.RenderOptions) -> list[dict[str, object]]:
        meta = obj["metadata"]
        assert isinstance(meta, dict)
        return [{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": meta["name"]}}]

    path = tmp_path / "job.yaml"
    path.write_text("apiVersion: ray.io/v1\nkind: RayJob\nmetadata: {name: j}\nspec: {}\n")
    registry.register("RayJob", fake)
    try:
        code, out, err = await cli("render", "-f", str(path), kubeconfig=kubeconfig)
    finally:
        registry._loaded.pop("RayJob", None)
    assert code == 0, err
    assert yaml.safe_load(out) == {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "j"},
    }


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("90", 90.0), ("2.5", 2.5), ("5m", 300.0), ("1h30m", 5400.0), (" 300ms ", 0.3)],
)
def test_timeout_flags_read_go_durations_or_seconds(text: str, seconds: float) -> None:
    from kuberay.kubectl_ray.waiting import parse_duration

    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "5x", "-5m", "soon", "5 m"])
def test_timeout_flags_reject_what_is_no_duration(text: str) -> None:
    from kuberay.kubectl_ray.waiting import parse_duration

    with pytest.raises(ValueError, match="invalid duration"):
        parse_duration(text)
