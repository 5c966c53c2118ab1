"""What the operator imports to start: only what its default configuration uses (its idle
memory is mostly the code it loaded). A fresh interpreter imports the entry module and the
controllers' setup (what ``kuberay-operator`` imports before it runs, webhooks off and
every default gate), then reports which of the packages needed only later, or only when
switched on, are loaded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

#: Loaded only when used: exec-credential kubeconfigs (kubernetes-asyncio), the typed API
#: and its validators (first RayCluster, RayJob or RayService reconciled), RayCronJob
#: schedules (cron_converter, dateutil), the webhook server, the gated controllers.
LAZY = (
    "kubernetes_asyncio",
    "cattrs",
    "cron_converter",
    "dateutil",
    "kuberay.api.v1.convert",
    "kuberay.api.v1.defaults",
    "kuberay.api.v1.raycluster_types",
    "kuberay.api.v1.validation.raycluster",
    "kuberay.webhooks.server",
    "kuberay.webhooks.admission",
    "kuberay.controllers.raycronjob",
    "kuberay.controllers.networkpolicy",
    "kuberay.controllers.mtls",
    "kuberay.historyserver",
)

PROBE = """
import json, sys
import kuberay.cmd.operator, kuberay.controllers.setup
print(json.dumps(sorted(sys.modules)))
"""


def _loaded(code: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_start_up_imports_none_of_the_lazily_needed_packages() -> None:
    loaded = _loaded(PROBE)
    assert "kuberay.controllers.raycluster.reconciler" in loaded  # the probe did import them
    assert sorted(m for m in loaded if m.split(".")[0] in LAZY or m.startswith(LAZY)) == []


def test_the_lazy_parts_load_when_used() -> None:
    loaded = _loaded(
        PROBE.replace(
            "print(",
            "from kuberay.api.v1 import validation\n"
            "validation.validate_raycluster({'metadata': {'name': 'a'}, 'spec': {}})\n"
            "print(",
        )
    )
    assert {"cattrs", "kuberay.api.v1.validation.raycluster", "kuberay.api.v1.convert"} <= loaded
