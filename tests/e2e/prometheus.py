"""A real Prometheus (``hack/build/build_prometheus.py``) on 127.0.0.1 for the e2e monitoring test.

:class:`PrometheusProcess` writes its configuration from static targets only (no service
discovery of any kind), refuses a target outside loopback and the real node's pod network
(so nothing is ever scraped from a kwok pod IP or off the machine), starts the server with
the lifecycle API on, re-targets it with :meth:`PrometheusProcess.set_targets` (a new file
and ``POST /-/reload``) and answers queries through the HTTP API.
"""

from __future__ import annotations

import ipaddress
import json
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.e2e.harness import free_port, tail
from tests.e2e.realcluster import POD_CIDR

SCRAPE_INTERVAL = "2s"
LOOPBACK = ipaddress.ip_network("127.0.0.0/8")
REAL_POD_NETWORK = ipaddress.ip_network(POD_CIDR)


@dataclass(frozen=True)
class ScrapeJob:
    """One scrape job: ``job_name``, static ``host:port`` targets with their labels, and
    its scrape interval (default: :data:`SCRAPE_INTERVAL`)."""

    name: str
    targets: Sequence[tuple[str, Mapping[str, str]]]
    honor_labels: bool = False
    interval: str = SCRAPE_INTERVAL


def allowed_target(address: str) -> bool:
    """Whether ``host:port`` is on loopback or the real node's pod network."""
    host = address.rsplit(":", 1)[0]
    ip = ipaddress.ip_address(host)
    return ip in LOOPBACK or ip in REAL_POD_NETWORK


class PrometheusProcess:
    """A Prometheus server in ``workdir``, listening on 127.0.0.1 only."""

    def __init__(self, binary: Path, workdir: Path, rule_files: Sequence[Path] = ()) -> None:
        self.binary = binary
        self.workdir = workdir
        self.rule_files = [str(p) for p in rule_files]
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.config = workdir / "prometheus.yml"
        self.log_path = workdir / "prometheus.log"
        self.popen: subprocess.Popen[bytes] | None = None

    def _write_config(self, jobs: Sequence[ScrapeJob]) -> None:
        scrape_configs = []
        for job in jobs:
            for address, _ in job.targets:
                assert allowed_target(address), f"refusing to scrape {address}"
            scrape_configs.append(
                {
                    "job_name": job.name,
                    "honor_labels": job.honor_labels,
                    "scrape_interval": job.interval,
                    "static_configs": [
                        {"targets": [address], "labels": dict(labels)}
                        for address, labels in job.targets
                    ],
                }
            )
        config = {
            "global": {"scrape_interval": SCRAPE_INTERVAL, "evaluation_interval": SCRAPE_INTERVAL},
            "rule_files": self.rule_files,
            "scrape_configs": scrape_configs,
        }
        self.config.write_text(yaml.safe_dump(config, sort_keys=False))

    def start(self, jobs: Sequence[ScrapeJob]) -> PrometheusProcess:
        """Start with ``jobs``; returns once the server answers ``/-/ready``."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._write_config(jobs)
        with self.log_path.open("ab") as log:
            self.popen = subprocess.Popen(
                [
                    str(self.binary),
                    f"--config.file={self.config}",
                    f"--storage.tsdb.path={self.workdir / 'data'}",
                    f"--web.listen-address=127.0.0.1:{self.port}",
                    "--web.enable-lifecycle",
                    "--log.level=warn",
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while not self._ready():
            assert self.popen.poll() is None, f"prometheus exited:\n{tail(self.log_path)}"
            assert time.monotonic() < deadline, f"prometheus not ready:\n{tail(self.log_path)}"
            time.sleep(0.5)
        return self

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as resp:
                return resp.status == 200
        except OSError:
            return False

    def set_targets(self, jobs: Sequence[ScrapeJob]) -> None:
        """Replace the scrape jobs (a new configuration file, then a reload)."""
        self._write_config(jobs)
        request = urllib.request.Request(f"{self.url}/-/reload", method="POST")
        with urllib.request.urlopen(request, timeout=30) as resp:
            assert resp.status == 200, resp.read()

    def api(self, path: str, **params: str) -> Any:
        """``GET /api/v1/<path>``'s ``data`` (asserting status success)."""
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=30) as resp:
            body = json.loads(resp.read())
        assert body["status"] == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """The instant vector (or scalar as one sample) ``expr`` evaluates to now."""
        data = self.api("query", query=expr)
        if data["resultType"] == "vector":
            return list(data["result"])
        return [{"metric": {}, "value": data["result"]}]

    def terminate(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 20 s)."""
        if self.popen is None or self.popen.poll() is not None:
            return
        self.popen.terminate()
        try:
            self.popen.wait(20)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(10)
