"""The history server: Ray clusters' logs, events and dashboard snapshots after the cluster
is gone.

* ``storage``: one small async object-store interface (``ObjectStore``) with its backends
  (local directory, S3 and S3-compatible, GCS, Azure Blob, Aliyun OSS) and the storage
  layout (``layout``), KubeRay's key scheme byte for byte, shared by both programs;
* ``collector``: ``kuberay-history-collector``, the program the operator-injected
  ``ray-history-collector`` sidecar runs;
* ``server``: ``kuberay-history-server``, which serves Ray's dashboard API (and UI) from storage.

Nothing here imports the operator's controllers, and the operator never imports this package:
each program installs and starts only what it uses.
"""
