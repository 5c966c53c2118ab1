"""The tour in README.md and docs/getting-started.md says what the code does: its commands are
the ones ``make run`` prints (``hack/cluster/run.py controller_hint``), its tables have the printer
columns of the CRDs, and the outputs it shows follow from the samples in manifests/samples.
(This checks the text; tests/e2e/test_tour_real.py runs the same commands on real Ray.)"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest
import yaml

from kuberay.controllers.builders.resources import desired_resource_status
from tests.unit.hack.test_run_operator_env import _run_module

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "docs" / "getting-started.md"]
SAMPLES = ROOT / "manifests" / "samples"


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def _hint_commands() -> set[str]:
    run = _run_module()
    identity = run.OperatorIdentity(Path("/op"), "ray-system", "someone")
    hint = run.controller_hint(
        Path("/r/.run/kubeconfig"), Path("kubectl"), identity, real=True, workdir=Path("/r/.run")
    )
    return {_command(line) for line in hint.splitlines() if line.startswith("  ")}


def _command(line: str) -> str:
    """A shell line without its trailing comment (set off by two spaces) and extra spaces."""
    return " ".join(re.sub(r"\s{2,}#\s.*$", "", line.strip()).split())


@functools.cache
def _columns(kind: str) -> list[str]:
    path = ROOT / "manifests" / "crds" / f"ray.io_{kind.lower()}s.yaml"
    crd = yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    cols = [c["name"] for c in version["additionalPrinterColumns"] if not c.get("priority")]
    return ["NAME", *(c.upper() for c in cols)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_tour_runs_the_commands_make_run_prints(page: Path) -> None:
    printed = _hint_commands()
    text = page.read_text()
    if page.name == "README.md":  # the tour's section only
        text = text.split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]
    commands = [
        _command(line)
        for block in _blocks(text, "sh")
        for line in block.splitlines()
        if line.startswith(("kubectl apply", "kubectl get ray", "kubectl logs", "curl"))
    ]
    assert len(commands) >= 7, commands
    missing = [c for c in commands if c not in printed]
    assert not missing, f"not what make run prints: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_tables_have_the_crds_printer_columns(page: Path) -> None:
    headers = {
        tuple(re.split(r"\s{2,}", block.splitlines()[0].strip()))
        for block in _blocks(page.read_text(), "text")
        if block.startswith("NAME ")
    }
    assert headers == {tuple(_columns(k)) for k in ("RayCluster", "RayJob", "RayService")}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_outputs_follow_from_the_samples(page: Path) -> None:
    text = page.read_text()
    cluster = yaml.safe_load((SAMPLES / "raycluster.yaml").read_text())
    status = desired_resource_status(cluster)
    row = re.search(r"^raycluster-sample +(.*)$", text, re.M)
    assert row is not None
    desired, available, cpus, memory, gpus, state, _ = row.group(1).split()
    assert (cpus, memory, gpus, state) == (
        status["desiredCPU"],
        status["desiredMemory"],
        status["desiredGPU"],
        "ready",
    )
    assert desired == available == str(cluster["spec"]["workerGroupSpecs"][0]["replicas"])
    code = next(yaml.safe_load_all((SAMPLES / "rayjob.yaml").read_text()))["data"]["squares.py"]
    assert "for i in range(10)" in code
    assert f"squares: {[i * i for i in range(10)]}" in text
    serve = next(yaml.safe_load_all((SAMPLES / "rayservice.yaml").read_text()))["data"]["hello.py"]
    assert 'f"hello {name}, from Ray Serve\\n"' in serve and "?name=you" in text
    assert "\nhello you, from Ray Serve\n" in text
