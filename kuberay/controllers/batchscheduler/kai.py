"""KAI scheduler (``--batch-scheduler=kai-scheduler``): children get
``schedulerName: kai-scheduler`` and the parent's ``kai.scheduler/queue`` label (without
it they stay pending: KAI needs a queue). A RayJob in K8sJobMode is refused on every
pass: the submitter pod appears only after the cluster is ready, which KAI cannot gang.
"""

from __future__ import annotations

import structlog

from kuberay.api.v1 import constants as C
from kuberay.api.v1.enums import JobSubmissionMode
from kuberay.api.v1.rules import submission_mode
from kuberay.controllers.batchscheduler.interface import (
    BatchScheduler,
    BatchSchedulerError,
    kind_of,
    labels_of,
    set_label,
    set_scheduler_name,
)
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj

log = structlog.get_logger("kuberay.batchscheduler.kai")


PLUGIN_NAME = "kai-scheduler"
QUEUE_LABEL_KEY = "kai.scheduler/queue"


class KaiScheduler(BatchScheduler):
    """The kai-scheduler plugin (writes no objects of its own)."""

    plugin_name = PLUGIN_NAME

    async def do_batch_scheduling_on_submission(self, obj: Obj) -> None:
        if kind_of(obj) == C.KIND_RAYJOB:
            mode = submission_mode(k8s.spec(obj))
            if mode == JobSubmissionMode.K8S_JOB_MODE:
                raise BatchSchedulerError(
                    "KAI-Scheduler does not support RayJob with K8sJobMode: the submitter pod "
                    "is created after RayCluster is ready, preventing proper gang scheduling"
                )

    def add_metadata_to_child_resource(self, parent: Obj, child: Obj, group_name: str) -> None:
        set_scheduler_name(child, self.name())
        queue = labels_of(parent).get(QUEUE_LABEL_KEY)
        if not queue:
            log.info(
                "queue label missing from parent; child will remain pending", label=QUEUE_LABEL_KEY
            )
            return
        set_label(child, QUEUE_LABEL_KEY, queue)


__all__ = ["PLUGIN_NAME", "QUEUE_LABEL_KEY", "KaiScheduler"]
