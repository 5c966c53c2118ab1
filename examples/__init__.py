"""Example controllers built on :mod:`kuberay.reconcile` (not part of the installed package)."""
