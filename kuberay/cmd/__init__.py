"""Command-line entry points (``kuberay-operator``)."""
