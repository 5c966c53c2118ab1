"""``ray start`` generation: flags, resources, accelerators and the container command."""

from __future__ import annotations

import pytest

from kuberay.controllers.builders.ray_start import (
    convert_param_map,
    generate_ray_start_command,
    is_gpu_resource_key,
    is_npu_resource_key,
    ray_container_command,
    set_missing_ray_start_params,
    update_ray_start_params_labels,
    update_ray_start_params_resources,
)
from kuberay.controllers.common.options import BuildOptions

FQDN = "raycluster-sample-head-svc.default.svc.cluster.local"


def test_reference_head_command() -> None:
    params: dict[str, str] = {}
    set_missing_ray_start_params(params, "head", "6379", "")
    cmd = generate_ray_start_command(
        "head", params, {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1"}}
    )
    assert cmd == (
        "ray start --head  --block  --dashboard-agent-listen-port=52365  "
        "--dashboard-host=0.0.0.0  --memory=1073741824  --metrics-export-port=8080  --num-cpus=1 "
    )


def test_reference_worker_command() -> None:
    params = {"port": "6379"}
    set_missing_ray_start_params(params, "worker", "6379", FQDN)
    cmd = generate_ray_start_command(
        "worker", params, {"limits": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": 3}}
    )
    assert cmd == (
        f"ray start  --address={FQDN}:6379  --block  --dashboard-agent-listen-port=52365  "
        "--memory=1073741824  --metrics-export-port=8080  --num-cpus=1  --num-gpus=3  --port=6379 "
    )


def test_neuron_and_custom_resource() -> None:
    params = {"resources": '"{"custom_resource":2}"'}
    cmd = generate_ray_start_command("head", params, {"limits": {"aws.amazon.com/neuroncore": 4}})
    assert cmd == 'ray start --head  --resources=\'{"custom_resource":2,"neuron_cores":4}\' '


def test_defaults_only_when_missing_and_block_forced() -> None:
    params = {
        "dashboard-host": "127.0.0.1",
        "metrics-export-port": "9090",
        "dashboard-agent-listen-port": "8266",
        "address": "x:1",
        "block": "false",
    }
    set_missing_ray_start_params(params, "worker", "6379", FQDN)
    assert params == {
        "dashboard-host": "127.0.0.1",
        "metrics-export-port": "9090",
        "dashboard-agent-listen-port": "8266",
        "address": "x:1",
        "block": "true",
    }


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        ({"limits": {"cpu": "2"}}, "2"),
        ({"requests": {"cpu": "3"}}, "3"),
        ({"limits": {"cpu": "500m"}}, "1"),
        ({"limits": {"cpu": "0"}, "requests": {"cpu": "2"}}, "2"),
    ],
)
def test_num_cpus_source(resources: dict[str, dict[str, str]], expected: str) -> None:
    params: dict[str, str] = {}
    generate_ray_start_command("worker", params, resources)
    assert params["num-cpus"] == expected


def test_memory_only_from_limit_and_user_values_win() -> None:
    params: dict[str, str] = {"num-cpus": "0"}
    generate_ray_start_command("worker", params, {"requests": {"memory": "1Gi", "cpu": "4"}})
    assert params == {"num-cpus": "0"}


@pytest.mark.parametrize(
    ("key", "gpu"),
    [
        ("nvidia.com/gpu", True),
        ("amd.com/gpu", True),
        ("nvidia.com/mig-2g.32gb", True),
        ("nvidia.com/mig-1g.5gb", True),
        ("google.com/tpu", False),
        ("cpu", False),
        ("huawei.com/Ascend910B", False),
        ("huawei.com/npu", False),
    ],
)
def test_gpu_keys(key: str, gpu: bool) -> None:
    assert is_gpu_resource_key(key) is gpu


@pytest.mark.parametrize(
    ("key", "npu"),
    [
        ("huawei.com/Ascend910B", True),
        ("huawei.com/ascend310p", True),
        ("HUAWEI.COM/NPU", True),
        ("huawei.com/Ascend910B-memory", False),
        ("huawei.com/Ascend310P-core", False),
        ("huawei.com/npu-memory", False),
        ("nvidia.com/gpu", False),
        ("example.com/huawei.com/ascend", False),
    ],
)
def test_npu_keys(key: str, npu: bool) -> None:
    assert is_npu_resource_key(key) is npu


def test_tpu_and_multiple_accelerators() -> None:
    params: dict[str, str] = {}
    generate_ray_start_command("worker", params, {"limits": {"google.com/tpu": "4"}})
    assert params["resources"] == "'{\"TPU\":4}'"
    params = {}
    generate_ray_start_command(
        "worker",
        params,
        {"limits": {"aws.amazon.com/neuroncore": 4, "nvidia.com/gpu": 1, "google.com/tpu": 8}},
    )
    assert params["num-gpus"] == "1"
    assert params["resources"] == "'{\"neuron_cores\":4}'"


def test_existing_accelerator_or_invalid_resources_are_kept() -> None:
    params = {"resources": '{"TPU": 4}'}
    generate_ray_start_command("worker", params, {"limits": {"aws.amazon.com/neuroncore": 4}})
    assert params["resources"] == '{"TPU": 4}'
    params = {"resources": "{"}
    cmd = generate_ray_start_command("worker", params, {"limits": {"nvidia.com/gpu": 1}})
    assert "num-gpus" not in params
    assert " --resources={ " in cmd


def test_group_resources_override() -> None:
    params = {"memory": "1000", "resources": "'{\"old\":1}'"}
    update_ray_start_params_resources(params, {"CPU": "2", "memory": "4Gi"})
    assert params["num-cpus"] == "2"
    assert params["memory"] == "4294967296"
    update_ray_start_params_resources(params, {"nvidia.com/gpu": "1", "TPU": "4"})
    assert params["num-gpus"] == "1"
    assert params["resources"] == "'{\"TPU\":4}'"
    update_ray_start_params_resources(params, {"cpu": "4", "Custom-Resource": "0.3"})
    assert params["resources"] == "'{\"Custom-Resource\":0.30000000000000004}'"


def test_group_labels() -> None:
    params: dict[str, str] = {}
    update_ray_start_params_labels(
        params,
        {
            "topology.kubernetes.io/zone": "us-central2",
            "ray.io/node-group": "worker-group-1",
            "cloud.google.com/gke-spot": "true",
        },
    )
    assert params["labels"] == (
        "cloud.google.com/gke-spot=true,ray.io/node-group=worker-group-1,"
        "topology.kubernetes.io/zone=us-central2"
    )


def test_boolean_flags() -> None:
    assert convert_param_map({"include-log-monitor": "false"}) == " --include-log-monitor=false "
    assert convert_param_map({"log-color": "TRUE"}) == " --log-color=TRUE "
    assert convert_param_map({"disable-usage-stats": "True"}) == " --disable-usage-stats "
    assert convert_param_map({"disable-usage-stats": "false"}) == ""


def test_container_command_variants() -> None:
    opts = BuildOptions()
    start = "ray start --head  --block "
    assert ray_container_command({}, start, overwrite=False, options=opts) == (
        ["/bin/bash", "-c", "--"],
        ["ulimit -n ${RAY_START_ULIMIT_OPEN_FILES:-65536}; ray start --head  --block "],
    )
    user = {"command": ["echo"], "args": ["hi"]}
    assert ray_container_command(user, start, overwrite=False, options=opts) == (
        ["/bin/bash", "-c", "--"],
        [
            " echo  hi  && ulimit -n ${RAY_START_ULIMIT_OPEN_FILES:-65536}; "
            "ray start --head  --block "
        ],
    )
    assert ray_container_command(user, start, overwrite=True, options=opts) is None
    assert (
        ray_container_command({"args": ["ray start --head"]}, start, overwrite=False, options=opts)
        is None
    )
    login = ray_container_command(
        {}, start, overwrite=False, options=BuildOptions(enable_login_shell=True)
    )
    assert login is not None and login[0] == ["/bin/bash", "-cl", "--"]
