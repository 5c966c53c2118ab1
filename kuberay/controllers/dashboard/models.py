"""What KubeRay reads from the Ray dashboard's answers, as frozen values.

Decoding follows Go's ``json.Unmarshal`` into KubeRay's structs: unknown fields are ignored,
missing ones take their zero value (here ``""``/``None``), and a field of the wrong JSON type
makes the whole answer undecodable (:class:`ValueError`, turned into ``BadResponse`` by the
client).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from kuberay.api.v1.enums import is_job_terminal

__all__ = [
    "JobInfo",
    "ServeApplicationStatus",
    "ServeDeploymentStatus",
    "ServeDetails",
]


def _str(body: Mapping[str, Any], key: str) -> str:
    value = body.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValueError(f"field {key!r}: expected a string, got {type(value).__name__}")
    return value


def _opt_str(body: Mapping[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"field {key!r}: expected a string, got {type(value).__name__}")
    return value


def _opt_ms(body: Mapping[str, Any], key: str) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    # JSON numbers only; bool is an int in Python but not a number in JSON.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"field {key!r}: expected a number, got {type(value).__name__}")
    if value < 0 or (isinstance(value, float) and not value.is_integer()):
        raise ValueError(f"field {key!r}: expected a non-negative integer, got {value!r}")
    return int(value)


def _opt_map(body: Mapping[str, Any], key: str) -> dict[str, Any] | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise ValueError(f"field {key!r}: expected an object, got {type(value).__name__}")
    return dict(value)


def _object(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ValueError(f"{what}: expected a JSON object, got {type(value).__name__}")
    return value


@attrs.frozen
class JobInfo:
    """One Ray job as ``GET /api/jobs/{id}`` describes it (Ray's ``JobDetails``).

    ``start_time``/``end_time`` are Unix epoch milliseconds (None until set by Ray).
    """

    job_id: str | None
    submission_id: str | None
    status: str
    message: str
    error_type: str | None
    start_time: int | None
    end_time: int | None
    entrypoint: str
    metadata: dict[str, str] | None
    runtime_env: dict[str, Any] | None

    @property
    def terminal(self) -> bool:
        """STOPPED, SUCCEEDED or FAILED."""
        return is_job_terminal(self.status)

    @classmethod
    def from_json(cls, body: Any) -> JobInfo:
        """Decode one job object; raises ValueError when it is not one."""
        obj = _object(body, "job info")
        metadata = _opt_map(obj, "metadata")
        if metadata is not None and not all(isinstance(v, str) for v in metadata.values()):
            raise ValueError("field 'metadata': expected string values")
        return cls(
            job_id=_opt_str(obj, "job_id"),
            submission_id=_opt_str(obj, "submission_id"),
            status=_str(obj, "status"),
            message=_str(obj, "message"),
            error_type=_opt_str(obj, "error_type"),
            start_time=_opt_ms(obj, "start_time"),
            end_time=_opt_ms(obj, "end_time"),
            entrypoint=_str(obj, "entrypoint"),
            metadata=metadata,
            runtime_env=_opt_map(obj, "runtime_env"),
        )


@attrs.frozen
class ServeDeploymentStatus:
    """One deployment of a Serve application: ``HEALTHY``, ``UPDATING``, ``UNHEALTHY``, ..."""

    name: str
    status: str
    message: str = ""

    @classmethod
    def from_json(cls, body: Any) -> ServeDeploymentStatus:
        obj = _object(body, "serve deployment")
        return cls(name=_str(obj, "name"), status=_str(obj, "status"), message=_str(obj, "message"))


@attrs.frozen
class ServeApplicationStatus:
    """One Serve application: ``RUNNING``, ``DEPLOYING``, ``DEPLOY_FAILED``, ``UNHEALTHY``,
    ``DELETING`` or ``NOT_STARTED``, with its deployments by name, and (beyond KubeRay's
    struct) ``deployed_app_config``: the application's part of the config Serve was last
    given, as Ray reports it (None when absent or not an object; never an error, since
    KubeRay ignores the field)."""

    name: str
    status: str
    message: str = ""
    route_prefix: str | None = None
    docs_path: str | None = None
    deployments: Mapping[str, ServeDeploymentStatus] = attrs.field(factory=dict)
    deployed_app_config: Mapping[str, Any] | None = None

    @classmethod
    def from_json(cls, body: Any) -> ServeApplicationStatus:
        obj = _object(body, "serve application")
        raw = obj.get("deployments")
        deployments = {
            str(k): ServeDeploymentStatus.from_json(v)
            for k, v in _object(raw if raw is not None else {}, "deployments").items()
        }
        return cls(
            name=_str(obj, "name"),
            status=_str(obj, "status"),
            message=_str(obj, "message"),
            route_prefix=_opt_str(obj, "route_prefix"),
            docs_path=_opt_str(obj, "docs_path"),
            deployments=deployments,
            deployed_app_config=(
                dict(config)
                if isinstance(config := obj.get("deployed_app_config"), Mapping)
                else None
            ),
        )


@attrs.frozen
class ServeDetails:
    """``GET /api/serve/applications/?api_type=declarative``: applications by name (the
    unnamed application appears under ``""`` or ``"default"`` as Ray reports it), and (beyond
    KubeRay's struct) the instance's ``target_capacity`` in percent (None when unset, i.e.
    full capacity, or not a number; never an error, since KubeRay ignores the field)."""

    applications: Mapping[str, ServeApplicationStatus]
    deploy_mode: str = ""
    target_capacity: float | None = None

    @property
    def all_running(self) -> bool:
        """KubeRay's readiness rule: at least one application and every one ``RUNNING``."""
        return bool(self.applications) and all(
            a.status == "RUNNING" for a in self.applications.values()
        )

    @classmethod
    def from_json(cls, body: Any) -> ServeDetails:
        """Decode a Serve details answer; raises ValueError when it is not one."""
        obj = _object(body, "serve details")
        raw = obj.get("applications")
        apps = {
            str(k): ServeApplicationStatus.from_json(v)
            for k, v in _object(raw if raw is not None else {}, "applications").items()
        }
        capacity = obj.get("target_capacity")
        return cls(
            applications=apps,
            deploy_mode=_str(obj, "deploy_mode"),
            target_capacity=(
                float(capacity)
                if isinstance(capacity, int | float) and not isinstance(capacity, bool)
                else None
            ),
        )
