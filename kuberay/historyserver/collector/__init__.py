"""``kuberay-history-collector``: the sidecar that puts a Ray node's events, logs and (on the
head) dashboard snapshots into object storage, in KubeRay's layout (``..layout``).

One module per idea: ``config`` (flags/env), ``auth`` + ``dashboard`` (the dashboard client),
``nodeid``, ``sessions`` (``/tmp/ray`` session dirs), ``event_check`` / ``event_files`` /
``event_upload`` / ``event_collector`` (events), ``logs``, ``snapshots``, ``store`` (opening
the backend), ``app`` (start-up, loops, shutdown) and ``main`` (the console script).
"""
