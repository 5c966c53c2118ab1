"""The local cluster: ``make run``, the real node, the history server's store and server."""
