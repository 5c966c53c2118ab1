"""Which plugin ``--batch-scheduler`` selects (KubeRay ``schedulermanager``): one of
:data:`SCHEDULERS` by name; ``--enable-batch-scheduler`` (deprecated) is resolved to
``volcano`` by the config parser; an empty name is the no-op default scheduler. The
``KubernetesWAS`` gate selects :data:`KUBERNETES_WAS_PLUGIN` instead (no flag names it).

A plugin's module is imported when it is selected (an operator without a batch scheduler
loads none of them)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from kuberay.controllers.batchscheduler.interface import BatchScheduler
from kuberay.kube import Client

#: The ``KubernetesWAS`` gate's plugin (``kubernetes_was.PLUGIN_NAME``).
KUBERNETES_WAS_PLUGIN = "kubernetes-was-v1alpha2"

#: ``--batch-scheduler`` value -> (module, class) of its plugin.
_PLUGINS: dict[str, tuple[str, str]] = {
    "volcano": ("volcano", "VolcanoScheduler"),
    "yunikorn": ("yunikorn", "YuniKornScheduler"),
    "scheduler-plugins": ("scheduler_plugins", "SchedulerPluginsScheduler"),
    "kai-scheduler": ("kai", "KaiScheduler"),
}


def _plugin_class(module: str, name: str) -> type[BatchScheduler]:
    found: type[BatchScheduler] = getattr(
        importlib.import_module(f"kuberay.controllers.batchscheduler.{module}"), name
    )
    return found


class PluginClasses(Mapping[str, type[BatchScheduler]]):
    """``--batch-scheduler`` value -> plugin class; a class's module is imported when the
    class is first looked up (names and membership need no import)."""

    def __getitem__(self, name: str) -> type[BatchScheduler]:
        return _plugin_class(*_PLUGINS[name])

    def __iter__(self) -> Iterator[str]:
        return iter(_PLUGINS)

    def __len__(self) -> int:
        return len(_PLUGINS)

    def __contains__(self, name: object) -> bool:
        return name in _PLUGINS


#: ``--batch-scheduler`` value -> plugin class.
SCHEDULERS: Mapping[str, type[BatchScheduler]] = PluginClasses()


def new_batch_scheduler(name: str, client: Client | None) -> BatchScheduler | None:
    """The plugin called ``name`` (a :data:`SCHEDULERS` key or
    :data:`KUBERNETES_WAS_PLUGIN`) bound to ``client``; None for ``""`` (no scheduler).
    Raises ValueError for an unknown name (the config parser rejects those first)."""
    if not name:
        return None
    if name == KUBERNETES_WAS_PLUGIN:
        return _plugin_class("kubernetes_was", "KubernetesWASScheduler")(client)
    try:
        cls = SCHEDULERS[name]
    except KeyError:
        raise ValueError(f"the scheduler is not supported, name={name}") from None
    return cls(client)


__all__ = ["KUBERNETES_WAS_PLUGIN", "SCHEDULERS", "PluginClasses", "new_batch_scheduler"]
