"""The reference pages in ``docs/reference`` are what ``hack/docs/gen_docs.py`` makes of the code
now: regenerated into a temporary directory, every page must equal the committed one (run
``python hack/docs/gen_docs.py`` after changing a flag, a config field, a gate, a metric, an Event
reason or a status value)."""

from __future__ import annotations

from pathlib import Path

from hack.docs import gen_docs

REFERENCE = Path(__file__).resolve().parents[3] / "docs" / "reference"


def test_reference_pages_are_current(tmp_path: Path) -> None:
    written = gen_docs.write(tmp_path)
    assert sorted(p.name for p in written) == sorted(p.name for p in REFERENCE.glob("*.md"))
    stale = [p.name for p in written if p.read_text() != (REFERENCE / p.name).read_text()]
    assert not stale, f"stale: {stale}; run python hack/docs/gen_docs.py"


def test_the_pages_name_what_the_code_defines() -> None:
    pages = gen_docs.render()
    assert "| `--reconcile-concurrency` | int ≥ 1 | `4` |" in pages["flags.md"]
    assert (
        "| `probeAddr` | string | `:8082` | `--health-probe-bind-address` |" in pages["config.md"]
    )
    assert "| `RayCronJob` | `false` | Alpha |" in pages["feature-gates.md"]
    assert (
        "`controller_runtime_reconcile_total` | counter | `controller`, `result`"
        in (pages["metrics.md"])
    )
    assert "| `MissedSchedules` | Warning |" in pages["events.md"]
    assert "`RayClusterProvisioned`" in pages["conditions.md"]


def test_check_mode_reports_a_stale_page(tmp_path: Path) -> None:
    gen_docs.write(tmp_path)
    assert gen_docs.main(["--out", str(tmp_path), "--check"]) == 0
    (tmp_path / "events.md").write_text("old\n")
    assert gen_docs.stale(tmp_path) == ["events.md"]
    assert gen_docs.main(["--out", str(tmp_path), "--check"]) == 1
