"""REST client metrics, named as client-go registers them."""

from __future__ import annotations

from prometheus_client import Counter

REST_CLIENT_REQUESTS = Counter(
    "rest_client_requests",
    "Number of HTTP requests, partitioned by status code, method, and host.",
    ["code", "method", "host"],
)

REST_CLIENT_REQUESTS_BY_VERB = Counter(
    "kuberay_rest_client_requests_by_verb",
    "Number of API requests this process made, by Kubernetes verb and HTTP status code.",
    ["verb", "code"],
)
