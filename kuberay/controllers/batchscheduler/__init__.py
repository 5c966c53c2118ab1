"""Batch-scheduler plugins (KubeRay ``controllers/ray/batchscheduler``): volcano, yunikorn,
scheduler-plugins and kai-scheduler behind ``--batch-scheduler``, Kubernetes
workload-aware scheduling behind the ``KubernetesWAS`` gate; see
:mod:`.interface` for the hooks and where the controllers call them."""

from kuberay.controllers.batchscheduler.interface import BatchScheduler, BatchSchedulerError
from kuberay.controllers.batchscheduler.registry import (
    KUBERNETES_WAS_PLUGIN,
    SCHEDULERS,
    new_batch_scheduler,
)

__all__ = [
    "KUBERNETES_WAS_PLUGIN",
    "SCHEDULERS",
    "BatchScheduler",
    "BatchSchedulerError",
    "new_batch_scheduler",
]
