"""``kuberay-apiserver``: KubeRay's API server (V2), acting as its caller.

A sibling of :mod:`kuberay.historyserver`: an aiohttp server in front of the kube-apiserver
that answers KubeRay's V2 routes (the ``ray.io/v1`` proxy, the events route, the KubeRay
Service proxy) and the compute-template routes, and sends each request with the identity of
whoever made it (``--auth-mode=caller``, the default) or, as KubeRay's does, with its own
(``--auth-mode=service-account``). It may import the runtime (``kube``, ``http``), ``api``
and ``gocompat``, never the controllers (an import contract in ``pyproject.toml``).
"""
