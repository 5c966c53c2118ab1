"""A RayJob whose dashboard the operator may not dial says why (issue 26, item 15).

The operator runs outside the cluster, so its dial guard allows only 127.0.0.0/8; the head
pod's IP (what a kubelet on a real node reports) is 10.9.0.x, which is refused without a
packet being sent. While the RayJob waits, its status message and a Warning Event name the
refused address and the setting; an unchanged world then costs no write; when it gives up
(K8sJobMode: the submitter finished but the job never looked terminal; HTTPMode: the status
checks timed out) KubeRay's message is kept and the last error appended; ``kubectl ray why``
shows the cause both times.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kuberay.diagnosis.rules import diagnose
from kuberay.kube import Client
from kuberay.kubectl_ray.why import take_snapshot
from tests.integration.rayjob.conftest import start_operator
from tests.integration.rayjob.helpers import (
    events_about,
    finish_submitter,
    get_job,
    head_pod,
    make_ready,
    rayjob,
    wait_events,
    wait_job,
    wait_state,
)

SETTING = "(set KUBERAY_DASHBOARD_ALLOWED_NETWORKS or run the operator in the cluster)"


def refused(address: str) -> str:
    return f"dashboard address {address} refused: not in the allowed networks 127.0.0.0/8 {SETTING}"


def message_of(job: dict[str, Any]) -> str:
    return str((job.get("status") or {}).get("message") or "")


async def _running_on_a_refused_address(client: Client, namespace: str, name: str) -> str:
    """Bring the RayJob to Running on a head pod at 10.9.0.x; the refused ``ip:8265``."""
    job = await wait_state(client, namespace, name, "Initializing")
    cluster = job["status"]["rayClusterName"]
    await make_ready(client, namespace, cluster)  # no fake dashboard: the head is 10.9.0.x
    pod = await head_pod(client, namespace, cluster)
    ip = (await client.get("v1", "Pod", pod["metadata"]["name"], namespace))["status"]["podIP"]
    assert ip.startswith("10.9.0."), ip
    await wait_state(client, namespace, name, "Running")
    return f"{ip}:8265"


async def _names_the_cause_while_waiting(client: Client, namespace: str, name: str) -> str:
    address = await _running_on_a_refused_address(client, namespace, name)
    job = await wait_job(
        client,
        namespace,
        name,
        lambda j: refused(address) in message_of(j),
        message="the refused address in status.message",
    )
    assert job["status"]["jobDeploymentStatus"] == "Running"
    assert message_of(job).startswith("Waiting: ")
    events = await wait_events(client, namespace, name, {"DashboardAddressNotAllowed"})
    warning = [e for e in events if e.get("reason") == "DashboardAddressNotAllowed"]
    assert len(warning) == 1 and warning[0]["type"] == "Warning"
    assert refused(address) in warning[0]["note"]

    # Passes over an unchanged world (requeued every 3 s) write nothing: no status, no Event.
    before = (await get_job(client, namespace, name))["metadata"]["resourceVersion"]
    await asyncio.sleep(7)
    assert (await get_job(client, namespace, name))["metadata"]["resourceVersion"] == before
    again = [
        e
        for e in await events_about(client, namespace, name)
        if e.get("reason") == "DashboardAddressNotAllowed"
    ]
    assert len(again) == 1 and not again[0].get("series"), again

    # kubectl ray why names the cause while it waits.
    verdict = diagnose(await take_snapshot(client, "RayJob", name, namespace))
    assert not verdict.ready
    assert refused(address) in verdict.summary
    assert verdict.findings[0].reason == "JobStatusChecksFailing"
    return address


async def test_k8s_job_mode_names_the_refused_address_and_keeps_it_when_failing(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    async with start_operator(kclient, namespace, submitter_finished_timeout=3):
        await kclient.create(rayjob("dialk8s", namespace))
        address = await _names_the_cause_while_waiting(kclient, namespace, "dialk8s")
        # The job ran (in the cluster) but the operator never saw it end.
        await finish_submitter(kclient, namespace, "dialk8s")
        job = await wait_state(kclient, namespace, "dialk8s", "Failed", timeout=30)
        message = message_of(job)
        assert job["status"]["reason"] == "JobDeploymentStatusTransitionGracePeriodExceeded"
        assert message.startswith("The RayJob submitter finished at ")
        assert message.endswith(
            f"but the ray job did not reach terminal state within 3s: last error: "
            f"{refused(address)}"
        ), message
        events = await wait_events(
            kclient, namespace, "dialk8s", {"JobDeploymentStatusTransitionGracePeriodExceeded"}
        )
        gave_up = [
            e for e in events if e["reason"] == "JobDeploymentStatusTransitionGracePeriodExceeded"
        ]
        assert gave_up[0]["type"] == "Warning" and gave_up[0]["note"] == message
        verdict = diagnose(await take_snapshot(kclient, "RayJob", "dialk8s", namespace))
        assert not verdict.ready and refused(address) in verdict.summary


async def test_http_mode_status_check_timeout_names_the_refused_address(
    crds_installed: None, kclient: Client, namespace: str
) -> None:
    env = {"RAYJOB_STATUS_CHECK_TIMEOUT_SECONDS": "12"}
    async with start_operator(kclient, namespace, env=env):
        await kclient.create(rayjob("dialhttp", namespace, submissionMode="HTTPMode"))
        address = await _names_the_cause_while_waiting(kclient, namespace, "dialhttp")
        job = await wait_state(kclient, namespace, "dialhttp", "Failed", timeout=30)
        message = message_of(job)
        assert job["status"]["reason"] == "JobStatusCheckTimeoutExceeded"
        assert message.startswith("Job status checks have been failing since ")
        assert f"exceeded timeout of 12s: last error: {refused(address)}" in message, message
        # it gave up: the stop of its Ray job was tried and failed the same way (issue 44)
        assert message.endswith("no jobStatus was observed."), message
        assert "Failed to stop Ray job " in message, message
        await wait_events(kclient, namespace, "dialhttp", {"JobStatusCheckTimeoutExceeded"})
