"""REST client metrics, as KubeRay exports them.

``rest_client_requests_total`` is what controller-runtime registers; the other
``rest_client_*`` families are the ones KubeRay adds to controller-runtime's
registry (``controllers/ray/metrics/client_go_metrics.go``, copied from
component-base's ``restclient`` metrics), with the same names, labels and buckets.
As in client-go, ``verb`` and ``method`` are the HTTP method and ``host`` the
apiserver's ``host:port``. Watches are neither rate limited nor timed (client-go
does neither).
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

#: client-go's latency buckets (request and rate-limiter duration).
LATENCY_BUCKETS: tuple[float, ...] = (
    0.005,
    0.025,
    0.1,
    0.25,
    0.5,
    1.0,
    2.0,
    4.0,
    8.0,
    15.0,
    30.0,
    60.0,
)
#: DNS resolution buckets (the latency buckets without 60 s).
DNS_BUCKETS: tuple[float, ...] = LATENCY_BUCKETS[:-1]
#: Request/response size buckets: 64 bytes to 16 MiB.
SIZE_BUCKETS: tuple[float, ...] = (
    64,
    256,
    512,
    1024,
    4096,
    16384,
    65536,
    262144,
    1048576,
    4194304,
    16777216,
)

REST_CLIENT_REQUESTS = Counter(
    "rest_client_requests",
    "Number of HTTP requests, partitioned by status code, method, and host.",
    ["code", "method", "host"],
)
REST_CLIENT_REQUEST_DURATION = Histogram(
    "rest_client_request_duration_seconds",
    "Request latency in seconds. Broken down by verb, and host.",
    ["verb", "host"],
    buckets=LATENCY_BUCKETS,
)
REST_CLIENT_DNS_RESOLUTION_DURATION = Histogram(
    "rest_client_dns_resolution_duration_seconds",
    "DNS resolver latency in seconds. Broken down by host.",
    ["host"],
    buckets=DNS_BUCKETS,
)
REST_CLIENT_REQUEST_SIZE = Histogram(
    "rest_client_request_size_bytes",
    "Request size in bytes. Broken down by verb and host.",
    ["verb", "host"],
    buckets=SIZE_BUCKETS,
)
REST_CLIENT_RESPONSE_SIZE = Histogram(
    "rest_client_response_size_bytes",
    "Response size in bytes. Broken down by verb and host.",
    ["verb", "host"],
    buckets=SIZE_BUCKETS,
)
REST_CLIENT_RATE_LIMITER_DURATION = Histogram(
    "rest_client_rate_limiter_duration_seconds",
    "Client side rate limiter latency in seconds. Broken down by verb, and host.",
    ["verb", "host"],
    buckets=LATENCY_BUCKETS,
)
REST_CLIENT_REQUEST_RETRIES = Counter(
    "rest_client_request_retries",
    "Number of request retries, partitioned by status code, verb, and host.",
    ["code", "verb", "host"],
)

REST_CLIENT_REQUESTS_BY_VERB = Counter(
    "kuberay_rest_client_requests_by_verb",
    "Number of API requests this process made, by Kubernetes verb and HTTP status code.",
    ["verb", "code"],
)
