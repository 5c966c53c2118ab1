"""``kubectl ray``: KubeRay's kubectl plugin in Python, plus ``why`` and ``render``.

One module per command group (``get``, ``create``, ``delete``, ``scale``, ``version``,
``render``, ``why``, ``job``, ``log``, ``session``); :mod:`.main` builds the argparse
tree and runs a command; :mod:`.context` resolves kubeconfig, context and namespace as
kubectl does; :mod:`.output` prints kubectl-style tables and ``-o json|yaml``;
:mod:`.findings` and :mod:`.diagnosis` are ``why``'s pure rules; :mod:`.portforward`
tunnels local ports through the apiserver.
"""

from kuberay.kubectl_ray.main import main, run

__all__ = ["main", "run"]
