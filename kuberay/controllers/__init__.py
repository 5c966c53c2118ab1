"""The Ray operator's controllers (RayCluster, RayJob, RayService, RayCronJob, ...)
and the pure builders they share (:mod:`kuberay.controllers.common`)."""
