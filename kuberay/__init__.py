"""kuberay: a KubeRay-compatible operator for Ray and the asyncio controller runtime it runs on.

The generic runtime lives in :mod:`kuberay.kube`, :mod:`kuberay.workqueue`,
:mod:`kuberay.informers`, :mod:`kuberay.reconcile` and :mod:`kuberay.featuregates`;
none of those import anything Ray-specific.
"""

__version__ = "0.1.0"
