"""Where KubeRay's own sample manifests are read from: outside this repository, never a copy in it.

KubeRay's samples (``ray-operator/config/samples`` of ray-project/kuberay, each file named by its
path there with ``/`` replaced by ``_``) are real user inputs and the behavioural reference for the
conformance tests. The repository does not carry them; the tests read them from

* ``$KUBERAY_SAMPLES_DIR`` when set (even when it names no directory: then they skip), else
* ``shared/reference/kuberay-samples`` under the first ancestor of the repository root holding it
  (e.g. ``../shared/reference/kuberay-samples`` next to the clone).

Where neither exists (a user's clone) every test that needs them skips with :data:`SKIP_REASON`;
the project's own samples in ``tests/samples/`` still run everywhere.

* :data:`KUBERAY_SAMPLES`: the resolved directory (may not exist);
* :data:`AVAILABLE`: whether it is a directory;
* :data:`requires_kuberay_samples`: a ``pytest.mark.skipif`` marker for tests and modules;
* :func:`sample`: the path of one sample file; :func:`skip_unless_available`: skip from inside a
  test or fixture.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ENV = "KUBERAY_SAMPLES_DIR"
RELATIVE = Path("shared") / "reference" / "kuberay-samples"
REPO = Path(__file__).resolve().parents[1]


def resolve(environ: dict[str, str] | None = None, repo: Path = REPO) -> Path:
    """The samples directory: ``$KUBERAY_SAMPLES_DIR`` if set and non-empty, else
    ``<ancestor>/shared/reference/kuberay-samples`` for the nearest ancestor of ``repo`` that
    holds it, else ``<repo>/../shared/reference/kuberay-samples`` (which then does not exist)."""
    env = (os.environ if environ is None else environ).get(ENV)
    if env:
        return Path(env).expanduser()
    for ancestor in repo.parents:
        candidate = ancestor / RELATIVE
        if candidate.is_dir():
            return candidate
    return repo.parent / RELATIVE


KUBERAY_SAMPLES: Path = resolve()
AVAILABLE: bool = KUBERAY_SAMPLES.is_dir()
SKIP_REASON = (
    f"KubeRay's samples not found at {KUBERAY_SAMPLES} (set {ENV} or provide "
    "../shared/reference/kuberay-samples)"
)

#: Mark a test, class or module (``pytestmark = requires_kuberay_samples``) that reads the samples.
requires_kuberay_samples = pytest.mark.skipif(not AVAILABLE, reason=SKIP_REASON)


def sample(name: str) -> Path:
    """The path of KubeRay's sample file ``name`` (e.g. ``ray-cluster.mtls.yaml``); it exists only
    when :data:`AVAILABLE`."""
    return KUBERAY_SAMPLES / name


def skip_unless_available() -> None:
    """Skip the running test (or fixture) with :data:`SKIP_REASON` when the samples are absent."""
    if not AVAILABLE:
        pytest.skip(SKIP_REASON)
