"""Which plugin ``--batch-scheduler`` selects (KubeRay ``schedulermanager``): one of
:data:`SCHEDULERS` by name; ``--enable-batch-scheduler`` (deprecated) is resolved to
``volcano`` by the config parser; an empty name is the no-op default scheduler. The
``KubernetesWAS`` gate selects :data:`KUBERNETES_WAS_PLUGIN` instead (no flag names it)."""

from __future__ import annotations

from kuberay.controllers.batchscheduler.interface import BatchScheduler
from kuberay.controllers.batchscheduler.kai import KaiScheduler
from kuberay.controllers.batchscheduler.kubernetes_was import PLUGIN_NAME as KUBERNETES_WAS_PLUGIN
from kuberay.controllers.batchscheduler.kubernetes_was import KubernetesWASScheduler
from kuberay.controllers.batchscheduler.scheduler_plugins import SchedulerPluginsScheduler
from kuberay.controllers.batchscheduler.volcano import VolcanoScheduler
from kuberay.controllers.batchscheduler.yunikorn import YuniKornScheduler
from kuberay.kube import Client

#: ``--batch-scheduler`` value -> plugin class.
SCHEDULERS: dict[str, type[BatchScheduler]] = {
    cls.plugin_name: cls
    for cls in (VolcanoScheduler, YuniKornScheduler, SchedulerPluginsScheduler, KaiScheduler)
}


def new_batch_scheduler(name: str, client: Client | None) -> BatchScheduler | None:
    """The plugin called ``name`` (a :data:`SCHEDULERS` key or
    :data:`KUBERNETES_WAS_PLUGIN`) bound to ``client``; None for ``""`` (no scheduler).
    Raises ValueError for an unknown name (the config parser rejects those first)."""
    if not name:
        return None
    if name == KUBERNETES_WAS_PLUGIN:
        return KubernetesWASScheduler(client)
    try:
        cls = SCHEDULERS[name]
    except KeyError:
        raise ValueError(f"the scheduler is not supported, name={name}") from None
    return cls(client)


__all__ = ["KUBERNETES_WAS_PLUGIN", "SCHEDULERS", "new_batch_scheduler"]
