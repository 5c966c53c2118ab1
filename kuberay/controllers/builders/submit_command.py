"""The ``ray job submit`` shell script KubeRay's submitters run (``BuildJobSubmitCommand``).

The script is a list of tokens the caller joins with single spaces into one ``bash -c``
argument:

1. wait until the dashboard's GCS health endpoint answers ``success`` (a Python one-liner
   polled every 2 s; SidecarMode probes ``localhost``);
2. K8sJobMode, and SidecarMode with the ``SidecarSubmitterRestart`` gate: submit only when
   ``ray job status`` does not know the submission id yet, with ``--no-wait``, then
   ``ray job logs --follow`` (a retried submitter re-attaches instead of submitting twice);
   plain SidecarMode: a single blocking ``ray job submit``;
3. options, in KubeRay's order: ``--runtime-env-json`` (runtimeEnvYAML as Go JSON, sorted keys),
   ``--metadata-json`` (needs Ray >= 2.6.0 when ``rayVersion`` is set), ``--submission-id``,
   ``--entrypoint-num-cpus``/``--entrypoint-num-gpus`` (``%f``, only when > 0),
   ``--entrypoint-resources``; JSON values are quoted with Go's ``strconv.Quote``;
4. ``--`` and the entrypoint with surrounding white space removed (Go ``strings.TrimSpace``).

K8sJobMode dials ``http://`` + ``status.dashboardURL``; SidecarMode dials
``http://127.0.0.1:<head container port "dashboard">``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from kuberay.api.v1 import constants as c
from kuberay.api.v1.enums import JobSubmissionMode
from kuberay.controllers.common import gates as feature_gates
from kuberay.controllers.common.constants import RAY_CONTAINER_INDEX
from kuberay.controllers.common.objects import (
    as_list,
    as_map,
    as_str,
    find_container_port,
    pod_spec_of_template,
    spec,
    str_map,
)
from kuberay.gocompat.go_text import format_go_percent_f, go_quote, to_float32
from kuberay.gocompat.gojson import go_string
from kuberay.gocompat.goyaml import GoYAMLError, load_go_yaml, marshal_go_json

__all__ = [
    "RayJobBuildError",
    "build_job_submit_command",
    "float32_field",
    "metadata_json",
    "runtime_env_json",
]


#: KubeRay ``BasePythonHealthCommand`` (URL and timeout filled in).
_HEALTH_COMMAND: Final = (
    "python -c \"import urllib.request; r=urllib.request.urlopen('{url}', timeout={timeout}); "
    "exit(0 if b'success' in r.read() else 1)\""
)
_HEALTH_TIMEOUT_SECONDS: Final = 10
_METADATA_MIN_RAY_VERSION: Final = (2, 6, 0)
#: Masterminds/semver v3 ``NewVersion`` (coercing mode): the loose version grammar.
_LOOSE_SEMVER: Final = re.compile(
    r"v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?"
    r"(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
    r"(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?"
)
_UINT64_MAX: Final = (1 << 64) - 1


class RayJobBuildError(ValueError):
    """KubeRay cannot build this object for the RayJob (a reconcile error; str() says why)."""


def runtime_env_json(runtime_env_yaml: str) -> str:
    """``runtimeEnvYAML`` converted like ``yaml.YAMLToJSON`` ("" when the field is empty)."""
    if not runtime_env_yaml:
        return ""
    try:
        return marshal_go_json(load_go_yaml(runtime_env_yaml))
    except GoYAMLError as err:
        raise RayJobBuildError(str(err)) from err


def _semver_release(version: str) -> tuple[int, int, int] | None:
    """Parse ``version`` like semver's NewVersion; ``None`` for a pre-release version.

    Raises :class:`RayJobBuildError` with KubeRay's message when it does not parse.
    """
    match = _LOOSE_SEMVER.fullmatch(version)
    if match is None:
        raise RayJobBuildError(f"failed to parse Ray version: {version}: invalid semantic version")
    parts = [int(match.group(1))]
    parts += [int((match.group(i) or ".0")[1:]) for i in (2, 3)]
    for index, part in enumerate(parts):
        if part > _UINT64_MAX:
            raw = match.group(index + 1).lstrip(".")
            raise RayJobBuildError(
                f"failed to parse Ray version: {version}: error parsing version segment: "
                f'strconv.ParseUint: parsing "{raw}": value out of range'
            )
    prerelease = match.group(5) or ""
    if prerelease:
        for segment in prerelease.split("."):
            if segment.isdigit() and len(segment) > 1 and segment[0] == "0":
                raise RayJobBuildError(
                    f"failed to parse Ray version: {version}: version segment starts with 0"
                )
        return None
    return parts[0], parts[1], parts[2]


def metadata_json(rayjob: Mapping[str, Any], metadata: Mapping[str, Any]) -> str:
    """``--metadata-json`` value; refuses a ``rayVersion`` below 2.6.0 (unset is accepted)."""
    cluster_spec = spec(rayjob).get("rayClusterSpec")
    if isinstance(cluster_spec, Mapping):
        version = as_str(cluster_spec.get("rayVersion"))
        if version:
            release = _semver_release(version)
            if release is None or release < _METADATA_MIN_RAY_VERSION:
                raise RayJobBuildError(
                    "the Ray version must be at least 2.6.0 to use the metadata field"
                )
    values = str_map(metadata)
    items = ",".join(f"{go_string(k)}:{go_string(values[k])}" for k in sorted(values))
    return "{" + items + "}"


def float32_field(job_spec: Mapping[str, Any], name: str) -> float:
    """A float32 spec field (``entrypointNumCpus`` ...) as Go holds it; 0 when absent.

    Raises :class:`RayJobBuildError` for a number a Go float32 cannot hold.
    """
    value = job_spec.get(name)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    try:
        return to_float32(value)
    except OverflowError as err:
        raise RayJobBuildError(
            f"json: cannot unmarshal number {value} into Go struct field RayJobSpec.spec.{name}"
            " of type float32"
        ) from err


def _sidecar_dashboard_port(rayjob: Mapping[str, Any], default: int) -> int:
    cluster_spec = as_map(spec(rayjob).get("rayClusterSpec"))
    head = as_map(cluster_spec.get("headGroupSpec"))
    containers = as_list(pod_spec_of_template(head.get("template")).get("containers"))
    if not containers:
        raise RayJobBuildError(
            "SidecarMode needs rayClusterSpec.headGroupSpec with a Ray head container"
        )
    head = as_map(containers[RAY_CONTAINER_INDEX])
    return find_container_port(head, c.DASHBOARD_PORT_NAME, default)


def build_job_submit_command(
    rayjob: Mapping[str, Any],
    *,
    submission_mode: str,
    gates: Mapping[str, bool],
    head_dashboard_port: int = c.DEFAULT_DASHBOARD_PORT,
) -> list[str]:
    """KubeRay ``BuildJobSubmitCommand`` for ``submission_mode`` (K8sJobMode or SidecarMode).

    SidecarMode takes the port from the ``dashboard`` port of the head container in
    ``rayClusterSpec`` and falls back to ``head_dashboard_port``. Raises
    :class:`RayJobBuildError` for another mode, unconvertible ``runtimeEnvYAML`` or metadata
    with a Ray version below 2.6.0.
    """
    job_spec = spec(rayjob)
    status = as_map(rayjob.get("status"))
    if submission_mode == JobSubmissionMode.SIDECAR_MODE:
        port = _sidecar_dashboard_port(rayjob, head_dashboard_port)
        address = f"http://127.0.0.1:{port}"
        health_url = f"http://localhost:{port}/{c.RAY_DASHBOARD_GCS_HEALTH_PATH}"
    elif submission_mode == JobSubmissionMode.K8S_JOB_MODE:
        address = as_str(status.get("dashboardURL"))
        if not address.startswith("http://"):
            address = "http://" + address
        health_url = f"{address}/{c.RAY_DASHBOARD_GCS_HEALTH_PATH}"
    else:
        raise RayJobBuildError(
            f"unsupported submission mode for job submit command: {submission_mode}"
        )

    job_id = as_str(status.get("jobId"))
    health = _HEALTH_COMMAND.format(url=health_url, timeout=_HEALTH_TIMEOUT_SECONDS)
    waiting = go_quote(f"Waiting for Ray Dashboard GCS to become healthy at {address} ...")
    cmd = ["until", health, ">/dev/null", "2>&1", ";"]
    cmd += ["do", "echo", waiting, ";", "sleep", "2", ";", "done", ";"]

    check_status = (
        submission_mode == JobSubmissionMode.K8S_JOB_MODE
        or feature_gates.feature_enabled(gates, feature_gates.SIDECAR_SUBMITTER_RESTART)
    )
    if check_status:
        cmd += ["if", "!", "ray", "job", "status", "--address", address, job_id]
        cmd += [">/dev/null", "2>&1", ";", "then"]
    cmd += ["ray", "job", "submit", "--address", address]
    if check_status:
        cmd.append("--no-wait")

    runtime_env = runtime_env_json(as_str(job_spec.get("runtimeEnvYAML")))
    if runtime_env:
        cmd += ["--runtime-env-json", go_quote(runtime_env)]
    metadata = as_map(job_spec.get("metadata"))
    if metadata:
        cmd += ["--metadata-json", go_quote(metadata_json(rayjob, metadata))]
    if job_id:
        cmd += ["--submission-id", job_id]
    num_cpus = float32_field(job_spec, "entrypointNumCpus")
    if num_cpus > 0:
        cmd += ["--entrypoint-num-cpus", format_go_percent_f(num_cpus)]
    num_gpus = float32_field(job_spec, "entrypointNumGpus")
    if num_gpus > 0:
        cmd += ["--entrypoint-num-gpus", format_go_percent_f(num_gpus)]
    resources = as_str(job_spec.get("entrypointResources"))
    if resources:
        cmd += ["--entrypoint-resources", go_quote(resources)]

    cmd += ["--", _go_trim_space(as_str(job_spec.get("entrypoint"))), ";"]
    if check_status:
        cmd += ["fi", ";", "ray", "job", "logs", "--address", address, "--follow", job_id]
    return cmd


#: Go ``unicode.IsSpace``: ASCII white space, U+0085, U+00A0 and Unicode White_Space.
_GO_SPACE: Final = "\t\n\v\f\r \x85\xa0\u1680" + "".join(
    chr(code) for code in (*range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000)
)


def _go_trim_space(text: str) -> str:
    """Go ``strings.TrimSpace``."""
    return text.strip(_GO_SPACE)
