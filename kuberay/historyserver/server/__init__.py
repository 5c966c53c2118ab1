"""``kuberay-history-server``: Ray's dashboard API served from a stored session.

* ``convert``: IDs, timestamps and small value helpers shared by the entity builders;
* ``event_files``: finding and decoding a session's event files (JSONL or JSON array,
  plain or gzip), as our collector and KubeRay's write them;
* ``tasks``, ``actors``, ``jobs``, ``nodes``, ``placement_groups``: one entity kind each,
  built from events in an order-independent way, in the shapes Ray's dashboard answers;
* ``session``: one decoded session (``SessionSnapshot``) and its loader;
* ``cache``: the bounded, lazily filled session cache;
* ``clusters``: the stored clusters and sessions (``/clusters``), cached briefly;
* ``config``, ``app``, ``routes_*``, ``main``: flags, the aiohttp app and the entry point.
"""
