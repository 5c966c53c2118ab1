"""The events route's query: upstream's ``withFieldSelector``.

``regarding.apiVersion=ray.io/v1`` is appended to the caller's ``fieldSelector`` values
(kept beside them, joined with ``,``, so the caller cannot drop it: with an empty or
contradicting selector of its own, the answer is empty), and the query is re-encoded as Go's
``url.Values.Encode`` does (keys sorted, each value in order).
"""

from __future__ import annotations

import urllib.parse

RAY_EVENTS_SELECTOR = "regarding.apiVersion=ray.io/v1"


def events_query(raw_query: str) -> str:
    """The query string sent upstream for the caller's ``raw_query``."""
    values: dict[str, list[str]] = {}
    for key, value in urllib.parse.parse_qsl(raw_query, keep_blank_values=True):
        values.setdefault(key, []).append(value)
    values["fieldSelector"] = [",".join([*values.get("fieldSelector", []), RAY_EVENTS_SELECTOR])]
    return urllib.parse.urlencode([(key, value) for key in sorted(values) for value in values[key]])
