"""Keep-alive connection pools for a client of many servers, one pool per origin.

A :class:`~kuberay.kube.http.ConnectionPool` serves one origin; an operator dials the
dashboard and Serve proxies of every Ray cluster it manages, addresses that come and go
with the clusters. :class:`OriginPools` hands out the pool of an origin (the same one for
as long as it is kept) and forgets pools with no open connection once it knows more than
``keep`` origins, so deleted clusters leave nothing behind: an origin's idle connections
close after the pools' ``idle_timeout``, and its pool goes with the next pruning.
"""

from __future__ import annotations

import urllib.parse

from .pool import IDLE_TIMEOUT, ConnectionPool

__all__ = ["OriginPools"]


class OriginPools:
    """``pool(url)``: the :class:`ConnectionPool` for ``url``'s ``scheme://host:port``
    (made on first use). ``close()`` closes every pool; asking for one afterwards raises
    :class:`RuntimeError`."""

    def __init__(
        self,
        *,
        user_agent: str | None = None,
        idle_timeout: float = IDLE_TIMEOUT,
        keep: int = 64,
    ) -> None:
        self.user_agent = user_agent
        self.idle_timeout = idle_timeout
        self.keep = keep
        self._pools: dict[str, ConnectionPool] = {}
        self._closed = False

    def pool(self, url: str) -> ConnectionPool:
        """The pool for ``url``'s origin (its path is not part of the pool: requests name it).

        Raises ValueError for a URL that is not ``http(s)://host[:port]``."""
        if self._closed:
            raise RuntimeError("the connection pools are closed")
        parts = urllib.parse.urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        found = self._pools.get(origin)
        if found is not None:
            return found
        if len(self._pools) >= self.keep:
            self._prune()
        made = ConnectionPool(origin, user_agent=self.user_agent, idle_timeout=self.idle_timeout)
        self._pools[origin] = made
        return made

    def _prune(self) -> None:
        for origin, pool in list(self._pools.items()):
            if pool.connections == 0:
                del self._pools[origin]

    def __len__(self) -> int:
        return len(self._pools)

    async def close(self) -> None:
        """Close every connection of every pool; no pool is handed out after."""
        self._closed = True
        pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            await pool.close()
