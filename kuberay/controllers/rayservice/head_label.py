"""The head pod's ``ray.io/serve`` label (KubeRay ``updateHeadPodServeLabel``): it decides
whether the head is behind the serve Service."""

from __future__ import annotations

from kuberay.api.v1 import constants as C
from kuberay.controllers.common.objects import as_map
from kuberay.controllers.rayservice.context import Ctx
from kuberay.controllers.rayservice.serve import ServeReconciler
from kuberay.kube import ApiError, Conflict, NotFound
from kuberay.kube import objects as k8s
from kuberay.kube.objects import Object as Obj
from kuberay.reconcile import NORMAL, WARNING, RequeueError

__all__ = ["update_head_pod_serve_label"]


async def update_head_pod_serve_label(
    ctx: Ctx, serve: ServeReconciler, rs: Obj, cluster: Obj | None, pod: Obj | None
) -> None:
    """``ray.io/serve`` on the head pod: ``false`` with ``excludeHeadPodFromServeSvc``, else
    whether its Serve proxy answers ``/-/healthz`` (unchanged until the first answer)."""
    if cluster is None or pod is None:
        return
    if k8s.spec(rs).get("excludeHeadPodFromServeSvc"):
        wanted = "false"
    else:
        healthy = serve.proxy_healthy(rs, cluster, pod)
        if healthy is None:
            return
        wanted = "true" if healthy else "false"
    labels = as_map(pod["metadata"].get("labels"))
    if labels.get(C.RAY_CLUSTER_SERVING_SERVICE_LABEL_KEY) == wanted:
        return
    meta = pod["metadata"]
    try:
        await ctx.client.patch(
            "v1",
            "Pod",
            meta["name"],
            {
                "metadata": {
                    "labels": {C.RAY_CLUSTER_SERVING_SERVICE_LABEL_KEY: wanted},
                    "resourceVersion": meta.get("resourceVersion"),
                }
            },
            meta["namespace"],
        )
    except NotFound:
        return
    except Conflict:
        raise RequeueError("head pod changed while its serve label was written") from None
    except ApiError as exc:
        ctx.event(
            rs,
            WARNING,
            "FailedToUpdateHeadPodServeLabel",
            f'Failed to update the serve label to "{wanted}" for the Head Pod '
            f"{meta['namespace']}/{meta['name']}: {exc}",
            "Update",
        )
        raise
    ctx.event(
        rs,
        NORMAL,
        "UpdatedHeadPodServeLabel",
        f'Updated the serve label to "{wanted}" for the Head Pod '
        f"{meta['namespace']}/{meta['name']}",
        "Update",
    )
