"""Loaders for the recorded Ray 2.60 fixtures in ``data/`` (see ``data/README.md``)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"


def load(name: str) -> Any:
    """A gzipped JSON fixture from ``data/``."""
    with gzip.open(DATA / name, "rb") as f:
        return json.loads(f.read())


def camel_bodies() -> list[list[dict[str, Any]]]:
    """The POST bodies Ray 2.60 sent (camelCase, the default), in order."""
    return load("ray260_events_camel.json.gz")  # type: ignore[no-any-return]


def snake_bodies() -> list[list[dict[str, Any]]]:
    """The bodies of a run with ``..._PRESERVE_PROTO_FIELD_NAME=true`` (snake_case)."""
    return load("ray260_events_snake.json.gz")  # type: ignore[no-any-return]


def snake_as_camel() -> list[list[dict[str, Any]]]:
    """``snake_bodies`` re-encoded by Ray's protobuf as camelCase (the expected conversion)."""
    return load("ray260_events_snake_as_camel.json.gz")  # type: ignore[no-any-return]


def dashboard() -> dict[str, dict[str, Any]]:
    """Dashboard answers recorded from the same cluster: path -> {status, body}."""
    return load("ray260_dashboard.json.gz")  # type: ignore[no-any-return]
