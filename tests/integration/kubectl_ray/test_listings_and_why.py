"""``get job|service|cronjob`` tables and ``-o json|yaml|wide|name``, the ``logs`` alias,
``log --link``, and ``why`` showing a repeated traceback once, on the real apiserver."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import yaml

from kuberay.kube import Client
from tests.integration.kubectl_ray.conftest import Cli

TRACEBACK = """Traceback (most recent call last):
  File "/home/ray/anaconda3/lib/python3.11/site-packages/ray/_private/runtime_env/agent.py", line 370, in _setup
    await create_for_plugin_if_needed(
  File "/home/ray/anaconda3/lib/python3.11/site-packages/ray/_private/runtime_env/pip.py", line 540, in create
    raise RuntimeError(msg)
    ^^^^^^^^^^^^^^^^^^^^^^^
RuntimeError: Failed to install pip requirements: no-such-package==9.9 not found"""  # noqa: E501
LAST_LINE = "RuntimeError: Failed to install pip requirements: no-such-package==9.9 not found"


def rayjob(name: str, ns: str) -> dict[str, Any]:
    return {
        "apiVersion": "ray.io/v1",
        "kind": "RayJob",
        "metadata": {"name": name, "namespace": ns},
        "spec": {"entrypoint": "python x.py", "clusterSelector": {"ray.io/cluster": "none"}},
    }


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def failed_job(kclient: Client, ns: str) -> None:
    """A RayJob whose runtime env failed: the traceback in its status message, its
    job message and a Warning Event."""
    await kclient.create(rayjob("broken", ns))
    await kclient.patch_status(
        "ray.io/v1", "RayJob", "broken",
        {"status": {"jobDeploymentStatus": "Failed", "jobStatus": "FAILED",
                    "reason": "AppFailed", "message": TRACEBACK}},
        ns,
    )  # fmt: skip
    await kclient.create(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": "broken.failed", "namespace": ns},
            "involvedObject": {"kind": "RayJob", "name": "broken", "namespace": ns,
                               "apiVersion": "ray.io/v1"},
            "type": "Warning",
            "reason": "Failed",
            "message": TRACEBACK,
            "firstTimestamp": now(),
            "lastTimestamp": now(),
            "count": 3,
            "source": {"component": "ray-job-controller"},
        }
    )  # fmt: skip


async def test_get_job_table_and_formats(cli: Cli, kclient: Client, namespace: str) -> None:
    empty = await cli("get", "job")
    assert empty.code == 0 and empty.out == ""
    assert empty.err == f"No resources found in {namespace} namespace.\n"

    await kclient.create(rayjob("fresh", namespace))
    await failed_job(kclient, namespace)
    table = (await cli("get", "jobs")).out.splitlines()
    header = table[0]
    # the CRD's printer columns, in order, then WHY
    for a, b in (
        ("NAME", "JOB STATUS"),
        ("JOB STATUS", "DEPLOYMENT STATUS"),
        ("DEPLOYMENT STATUS", "RAY CLUSTER NAME"),
        ("END TIME", "AGE"),
        ("AGE", "WHY"),
    ):
        assert header.index(a) < header.index(b), header  # fmt: skip
    rows = {line.split()[0]: line for line in table[1:]}
    assert set(rows) == {"broken", "fresh"}
    assert "FAILED" in rows["broken"].split() and "Failed" in rows["broken"].split()
    why_col = header.index("WHY")
    assert rows["fresh"][why_col:].startswith("no status: the operator has not processed")
    assert rows["broken"][why_col:].strip().startswith("job deployment Failed")
    assert "\n" not in rows["broken"]

    names = await cli("get", "job", "-o", "name")
    assert sorted(names.out.split()) == ["rayjob.ray.io/broken", "rayjob.ray.io/fresh"]
    one = json.loads((await cli("get", "job", "fresh", "-o", "json")).out)
    assert one["kind"] == "RayJob" and one["metadata"]["name"] == "fresh"
    listed = yaml.safe_load((await cli("get", "rayjobs", "-o", "yaml")).out)
    assert listed["kind"] == "List" and len(listed["items"]) == 2
    wide = (await cli("get", "job", "-A", "-o", "wide")).out.splitlines()
    assert wide[0].split()[:2] == ["NAMESPACE", "NAME"]
    assert {line.split()[0] for line in wide[1:]} >= {namespace}
    missing = await cli("get", "job", "nope")
    assert missing.code == 1 and 'rayjobs.ray.io "nope" not found' in missing.err

    # get cluster takes -o name too
    clusters = await cli("get", "cluster", "-o", "name")
    assert clusters.code == 0 and clusters.out == ""
    table = await cli("get", "cluster")  # stdout empty as KubeRay's; kubectl's note on stderr
    assert (table.code, table.out) == (0, "")
    assert table.err == f"No resources found in {namespace} namespace.\n"


async def test_get_service_and_cronjob(cli: Cli, kclient: Client, namespace: str) -> None:
    none = await cli("get", "service")
    assert none.code == 0 and "No resources found" in none.err
    container = {"name": "ray-head", "image": "rayproject/ray:2.52.0"}
    template = {"spec": {"containers": [container]}}
    cluster_spec = {"headGroupSpec": {"rayStartParams": {}, "template": template}}
    await kclient.create(
        {"apiVersion": "ray.io/v1", "kind": "RayService",
         "metadata": {"name": "serve", "namespace": namespace},
         "spec": {"rayClusterConfig": cluster_spec}}
    )  # fmt: skip
    svc = (await cli("get", "service")).out.splitlines()
    assert svc[0].split()[:3] == ["NAME", "SERVICE", "STATUS"]
    assert svc[0].split()[-1] == "WHY"
    assert svc[1].split()[0] == "serve"
    assert "no status" in svc[1]

    await kclient.create(
        {"apiVersion": "ray.io/v1", "kind": "RayCronJob",
         "metadata": {"name": "nightly", "namespace": namespace},
         "spec": {"schedule": "0 3 * * *", "suspend": True,
                  "jobTemplate": {"entrypoint": "python x.py",
                                  "rayClusterSpec": cluster_spec}}}
    )  # fmt: skip
    cron = await cli("get", "cronjob")
    assert cron.code == 0, cron.err
    lines = cron.out.splitlines()
    assert lines[0].split()[:2] == ["NAME", "SCHEDULE"]
    assert lines[1].split()[0] == "nightly" and "0 3 * * *" in lines[1]
    assert lines[1].split()[-1] == "suspended"


async def test_why_shows_a_repeated_traceback_once(
    cli: Cli, kclient: Client, namespace: str
) -> None:
    await failed_job(kclient, namespace)
    short = await cli("why", "rayjob/broken")
    assert short.code == 1
    assert short.out.count(LAST_LINE) == 2  # the verdict line and one finding
    assert "File " not in short.out and "Traceback" not in short.out
    findings = [line for line in short.out.splitlines()[1:] if line.startswith("  ")]
    assert len(findings) == 1, short.out
    assert "(also reported by" in findings[0] and "Event:Failed" in findings[0]
    assert "-v for all" in findings[0]

    full = await cli("why", "rayjob/broken", "-v")
    assert full.code == 1
    assert full.out.count("Traceback (most recent call last):") == 3
    assert full.out.count(LAST_LINE) >= 3
    doc = json.loads((await cli("why", "rayjob/broken", "-o", "json")).out)
    assert len(doc["findings"]) == 3  # machine output keeps every source


async def test_logs_alias_and_link(cli: Cli, kclient: Client, namespace: str) -> None:
    container = {"name": "ray-head", "image": "rayproject/ray:2.52.0"}
    await kclient.create(
        {"apiVersion": "ray.io/v1", "kind": "RayCluster",
         "metadata": {"name": "demo", "namespace": namespace},
         "spec": {"headGroupSpec": {"rayStartParams": {},
                                    "template": {"spec": {"containers": [container]}}}}}
    )  # fmt: skip
    # no pods: the alias reaches the same command, with its message
    for word in ("log", "logs"):
        got = await cli(word, "demo", "--out-dir", ".")
        assert got.code == 1 and "No Ray nodes found for resource demo" in got.err
    link = await cli("logs", "demo", "--link", "gke", "--node-type", "head")
    assert link.code == 0, link.err
    url = link.out.strip()
    assert url.startswith("https://console.cloud.google.com/logs/query;query=")
    assert "ray_io%2Fcluster%22%3D%22demo%22" in url and "node-type%22%3D%22head" in url
    assert "does not appear to be a GKE cluster" in link.err
    both = await cli("log", "demo", "--link", "gke", "--out-dir", "x")
    assert both.code == 1 and "--out-dir is incompatible with --link" in both.err
