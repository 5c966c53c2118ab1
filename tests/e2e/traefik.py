"""Traefik on the host as a real Gateway API implementation for the real-node cluster.

:func:`traefik_gateway` starts the binary ``hack/build/build_traefik.py`` caches, with only its
``kubernetesGateway`` provider, watching one namespace of the cluster as the cluster admin
(``KUBECONFIG``), one entry point ``web`` on port 80 of a loopback address of its own
(Traefik binds a Gateway listener to the entry point whose address ends in the listener's
port, and the operator's Gateway listens on 80; a random ``127.x.y.z`` keeps that port free
of anything else on the machine), no version check, no usage statistics, no dashboard.
It creates a GatewayClass with Traefik's controller name, waits for Traefik to accept it,
yields a :class:`TraefikGateway`, and stops the process and deletes the class on exit.
Traefik dials only the apiserver (loopback) and the Service endpoints it proxies to (pods on
the real node's bridge).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import socket
import subprocess
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kuberay.kube import Client, NotFound

GATEWAY_API = "gateway.networking.k8s.io/v1"
LISTENER_PORT = 80  # the operator's Gateway listener (KubeRay's)


def free_loopback_address() -> str:
    """A ``127.x.y.z`` whose port 80 can be bound now."""
    for _ in range(50):
        address = f"127.{random.randint(1, 254)}.{random.randint(0, 255)}.{random.randint(1, 254)}"
        with socket.socket() as probe:
            try:
                probe.bind((address, LISTENER_PORT))
            except OSError:
                continue
        return address
    raise RuntimeError("no loopback address with a free port 80")


@dataclass(frozen=True)
class TraefikGateway:
    """A running Traefik: its GatewayClass, entry point address, log file and access log
    (one JSON line per request: when it started, the backend it went to, status, duration)."""

    class_name: str
    address: str
    log: Path
    access_log: Path

    @property
    def url(self) -> str:
        """Base URL of the ``web`` entry point (no trailing slash)."""
        return f"http://{self.address}:{LISTENER_PORT}"

    def log_tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines of Traefik's log."""
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError as exc:
            return f"(no Traefik log: {exc})"

    def access_entries(self) -> list[dict[str, Any]]:
        """The access log's entries so far (unparsable lines left out)."""
        entries: list[dict[str, Any]] = []
        try:
            lines = self.access_log.read_text(errors="replace").splitlines()
        except OSError:
            return entries
        for line in lines:
            with contextlib.suppress(ValueError):
                entry = json.loads(line)
                if isinstance(entry, dict):
                    entries.append(entry)
        return entries


def _accepted(obj: dict[str, Any]) -> bool:
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Accepted" and c.get("status") == "True" for c in conditions)


@contextlib.asynccontextmanager
async def traefik_gateway(
    admin: Client, kubeconfig: Path, namespace: str, workdir: Path
) -> AsyncIterator[TraefikGateway]:
    """Traefik watching ``namespace`` with a fresh GatewayClass it has accepted."""
    from hack.build import build_traefik

    try:
        binary = await asyncio.to_thread(build_traefik.build)
    except build_traefik.BuildError as exc:
        pytest.skip(f"Traefik {build_traefik.TRAEFIK_VERSION} cannot be built here: {exc}")
    address = free_loopback_address()
    class_name = f"traefik-{namespace}"
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / f"traefik-{namespace}.log"
    access_log = workdir / f"traefik-{namespace}-access.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_")}
    env["KUBECONFIG"] = str(kubeconfig)
    args = [
        str(binary),
        "--global.checkNewVersion=false",
        "--global.sendAnonymousUsage=false",
        f"--entryPoints.web.address={address}:{LISTENER_PORT}",
        "--providers.kubernetesgateway=true",
        f"--providers.kubernetesgateway.namespaces={namespace}",
        f"--providers.kubernetesgateway.statusAddress.ip={address}",
        "--log.level=DEBUG",
        "--log.noColor=true",
        "--accesslog=true",
        f"--accesslog.filepath={access_log}",
        "--accesslog.format=json",
        "--accesslog.bufferingsize=0",
    ]
    await admin.create(
        {
            "apiVersion": GATEWAY_API,
            "kind": "GatewayClass",
            "metadata": {"name": class_name},
            "spec": {"controllerName": build_traefik.CONTROLLER_NAME},
        }
    )
    with log.open("w") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env)
    gateway = TraefikGateway(class_name, address, log, access_log)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, f"Traefik exited {proc.returncode}:\n{gateway.log_tail()}"
            current = await admin.get(GATEWAY_API, "GatewayClass", class_name)
            if _accepted(current):
                break
            assert time.monotonic() < deadline, (
                f"GatewayClass {class_name} not accepted by Traefik within 120s:\n"
                f"{gateway.log_tail()}"
            )
            await asyncio.sleep(1)
        yield gateway
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        with contextlib.suppress(NotFound):
            await admin.delete(GATEWAY_API, "GatewayClass", class_name)
