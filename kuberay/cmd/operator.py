"""``kuberay-operator``: the Ray operator process.

Parses KubeRay's flags (and ``--config``), configures logging, connects to the
cluster (``--kubeconfig``, ``$KUBECONFIG`` or in-cluster), serves the webhooks on :9443
when ``ENABLE_WEBHOOKS=true`` (as KubeRay: the validating ones and node label delivery's
two mutating ones), builds a Manager with
KubeRay's cache scoping, leader election id ``ray-operator-leader``, metrics and
probe addresses, registers the controllers the feature gates allow, and runs
until SIGTERM. Bad flags or config: one line on stderr and exit code 2.

Started together with its CRDs (Helm, GitOps, one ``kubectl apply``), it waits for
each kind to be served, logging which one, for up to ``--cache-sync-timeout`` (2m,
controller-runtime's default); a kind still not served then ends the process with
one error line naming it and exit code 1.
"""

from __future__ import annotations

import sys

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point: the process-wide tweaks of
    :func:`~kuberay.cmd.lean_imports.slim_process` first (before structlog and
    prometheus-client are imported), then the operator (:mod:`kuberay.cmd.operator_run`)."""
    from kuberay.cmd.lean_imports import slim_process

    notes = slim_process()
    from kuberay.cmd.operator_run import main as run_main

    return run_main(argv, notes)


if __name__ == "__main__":
    sys.exit(main())
