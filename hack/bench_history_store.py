"""The synthetic store ``hack/bench_history.py`` fills: session markers over ten namespaces in
KubeRay's layout, and for the newest sessions the event files of M tasks in Ray 2.60's event
shapes (per task one TASK_DEFINITION, three TASK_LIFECYCLE and one TASK_PROFILE event), plus
node and driver-job events. Pure: objects are built here, stored by the benchmark."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import orjson

from kuberay.historyserver.layout import ClusterRef, Layout, event_file_name

#: How many of the newest sessions hold events (the rest are markers only).
BIG_SESSIONS = 10
NAMESPACES = 10


def b64(raw: bytes) -> str:
    """Proto3 JSON bytes."""
    return base64.b64encode(raw).decode()


def session_name(i: int) -> str:
    """The i-th session's name (``i`` 0 is the newest), one minute apart."""
    t = time.gmtime(1_796_400_000 - 60 * i)
    return time.strftime("session_%Y-%m-%d_%H-%M-%S", t) + f"_{i % 1_000_000:06d}_{1000 + i}"


def cluster_of(i: int) -> ClusterRef:
    """Session i's cluster: every third one a RayJob's."""
    ns = f"bench-{i % NAMESPACES}"
    if i % 3 == 0:
        return ClusterRef(ns, f"job-{i}-raycluster-x2b4c", "rayjob", f"job-{i}")
    return ClusterRef(ns, f"cluster-{i}")


def _rfc3339(ns: int) -> str:
    secs, frac = divmod(ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{frac:09d}Z"


class EventMaker:
    """Ray 2.60's camelCase events for one session with ``tasks`` tasks in job 02."""

    def __init__(self, session: str, node: bytes, start_ns: int) -> None:
        self.session = session
        self.node = node
        self.node_b64 = b64(node)
        self.start_ns = start_ns
        self.job = (2).to_bytes(4, "little")
        self.serial = 0

    def _event(self, kind: str, source: str, ts: int, payload_key: str, payload: Any) -> bytes:
        self.serial += 1
        return orjson.dumps(
            {
                "eventId": b64(self.serial.to_bytes(28, "big")),
                "sourceType": source,
                "eventType": kind,
                "timestamp": _rfc3339(ts),
                "severity": "INFO",
                "sessionName": self.session,
                payload_key: payload,
                "nodeId": self.node_b64,
                "message": "",
            }
        )

    def node_events(self) -> list[bytes]:
        """The head node's definition and lifecycle."""
        ts = self.start_ns
        return [
            self._event(
                "NODE_DEFINITION_EVENT",
                "GCS",
                ts,
                "nodeDefinitionEvent",
                {
                    "nodeId": self.node_b64,
                    "nodeIpAddress": "10.0.0.1",
                    "labels": {"ray.io/node-id": self.node.hex(), "ray.io/node-group": "headgroup"},
                    "startTimestamp": _rfc3339(ts),
                    "hostname": "bench-head",
                    "nodeName": "10.0.0.1",
                    "instanceId": "",
                    "instanceTypeName": "",
                },
            ),
            self._event(
                "NODE_LIFECYCLE_EVENT",
                "GCS",
                ts,
                "nodeLifecycleEvent",
                {
                    "nodeId": self.node_b64,
                    "stateTransitions": [
                        {
                            "timestamp": _rfc3339(ts),
                            "resources": {"CPU": 16.0, "memory": 6.4e10},
                            "state": "ALIVE",
                            "aliveSubState": "UNSPECIFIED",
                        }
                    ],
                },
            ),
        ]

    def job_events(self) -> list[bytes]:
        """Job 02's driver definition and lifecycle (created, finished)."""
        job = b64(self.job)
        ts = self.start_ns
        return [
            self._event(
                "DRIVER_JOB_DEFINITION_EVENT",
                "GCS",
                ts,
                "driverJobDefinitionEvent",
                {
                    "jobId": job,
                    "driverPid": "4242",
                    "driverNodeId": self.node_b64,
                    "entrypoint": "python bench.py",
                    "config": {"serializedRuntimeEnv": "{}", "metadata": {}},
                },
            ),
            self._event(
                "DRIVER_JOB_LIFECYCLE_EVENT",
                "GCS",
                ts,
                "driverJobLifecycleEvent",
                {
                    "jobId": job,
                    "stateTransitions": [
                        {"state": "CREATED", "timestamp": _rfc3339(ts)},
                        {"state": "FINISHED", "timestamp": _rfc3339(ts + 600 * 10**9)},
                    ],
                },
            ),
        ]

    def task_events(self, n: int) -> list[bytes]:
        """Task n's five events."""
        task = n.to_bytes(8, "big") + b"\xff" * 12 + self.job
        tid, job = b64(task), b64(self.job)
        worker = b64((n % 64).to_bytes(28, "big"))
        t0 = self.start_ns + n * 1_000_000
        pid = 10_000 + n % 64
        log_file = f"/tmp/ray/session/logs/worker-{(n % 64):056x}-02000000-{pid}"
        return [
            self._event(
                "TASK_DEFINITION_EVENT",
                "CORE_WORKER",
                t0,
                "taskDefinitionEvent",
                {
                    "taskId": tid,
                    "taskFunc": {
                        "pythonFunctionDescriptor": {
                            "moduleName": "bench",
                            "functionName": f"work_{n % 7}",
                            "functionHash": "0e25dc38f9eb459594f6e3313ac6e788",
                            "className": "",
                        }
                    },
                    "taskName": f"work_{n % 7}",
                    "requiredResources": {"CPU": 1.0},
                    "jobId": job,
                    "parentTaskId": b64(b"\xff" * 20 + self.job),
                    "placementGroupId": b64(b"\xff" * 18),
                    "serializedRuntimeEnv": "{}",
                    "taskAttempt": 0,
                    "taskType": "NORMAL_TASK",
                    "language": "PYTHON",
                    "refIds": {},
                    "labelSelector": {},
                    "isDetachedActor": False,
                },
            ),
            self._event(
                "TASK_LIFECYCLE_EVENT",
                "CORE_WORKER",
                t0 + 1000,
                "taskLifecycleEvent",
                {
                    "taskId": tid,
                    "stateTransitions": [
                        {"state": "PENDING_ARGS_AVAIL", "timestamp": _rfc3339(t0)},
                        {"state": "PENDING_NODE_ASSIGNMENT", "timestamp": _rfc3339(t0 + 1000)},
                    ],
                    "jobId": job,
                    "taskAttempt": 0,
                    "nodeId": "",
                    "workerId": "",
                    "workerPid": 0,
                },
            ),
            self._event(
                "TASK_LIFECYCLE_EVENT",
                "CORE_WORKER",
                t0 + 30_000_000,
                "taskLifecycleEvent",
                {
                    "taskId": tid,
                    "stateTransitions": [
                        {"state": "SUBMITTED_TO_WORKER", "timestamp": _rfc3339(t0 + 2_000_000)},
                        {"state": "FINISHED", "timestamp": _rfc3339(t0 + 30_000_000)},
                    ],
                    "nodeId": self.node_b64,
                    "workerId": worker,
                    "jobId": job,
                    "taskAttempt": 0,
                    "workerPid": 0,
                },
            ),
            self._event(
                "TASK_LIFECYCLE_EVENT",
                "CORE_WORKER",
                t0 + 3_000_000,
                "taskLifecycleEvent",
                {
                    "taskId": tid,
                    "stateTransitions": [
                        {"state": "RUNNING", "timestamp": _rfc3339(t0 + 3_000_000)}
                    ],
                    "workerPid": pid,
                    "jobId": job,
                    "taskLogInfo": {
                        "stdoutFile": log_file + ".out",
                        "stderrFile": log_file + ".err",
                        "stdoutStart": str(n * 10),
                        "stdoutEnd": str(n * 10 + 10),
                        "stderrStart": "0",
                        "stderrEnd": "0",
                    },
                    "taskAttempt": 0,
                    "nodeId": "",
                    "workerId": "",
                },
            ),
            self._event(
                "TASK_PROFILE_EVENT",
                "CORE_WORKER",
                t0 + 4_000_000,
                "taskProfileEvents",
                {
                    "taskId": tid,
                    "jobId": job,
                    "profileEvents": {
                        "componentType": "worker",
                        "componentId": worker,
                        "nodeIpAddress": "10.0.0.1",
                        "events": [
                            {
                                "startTime": str(t0 + 4_000_000),
                                "endTime": str(t0 + 28_000_000),
                                "extraData": "{}",
                                "eventName": "task:execute",
                            },
                            {
                                "startTime": str(t0 + 3_500_000),
                                "endTime": str(t0 + 29_000_000),
                                "extraData": json.dumps(
                                    {"name": f"bench.work_{n % 7}", "task_id": task.hex()}
                                ),
                                "eventName": f"task::work_{n % 7}",
                            },
                        ],
                    },
                    "attemptNumber": 0,
                },
            ),
        ]


def big_session_objects(i: int, tasks: int, per_file: int) -> list[tuple[str, bytes]]:
    """The objects of big session ``i``: its event files, in KubeRay's layout."""
    session = session_name(i)
    layout = Layout(cluster_of(i))
    node = (i + 1).to_bytes(28, "big")
    start = 1_796_400_000 * 10**9 - 60 * i * 10**9
    maker = EventMaker(session, node, start)
    objects: list[tuple[str, bytes]] = []
    node_lines = maker.node_events()
    objects.append(
        (
            layout.node_events_key(
                session, node.hex(), event_file_name(node.hex(), start, compressed=False)
            ),
            b"\n".join(node_lines) + b"\n",
        )
    )
    lines = maker.job_events()
    file_no = 0

    def flush() -> None:
        nonlocal lines, file_no
        if lines:
            name = event_file_name(node.hex(), start + file_no, compressed=False)
            key = layout.job_events_key(session, node.hex(), "02000000", name)
            objects.append((key, b"\n".join(lines) + b"\n"))
            lines = []
            file_no += 1

    for n in range(tasks):
        lines.extend(maker.task_events(n))
        if len(lines) >= per_file:
            flush()
    flush()
    return objects
