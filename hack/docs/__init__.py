"""Generated docs and manifests (docs/reference, CRDs, Grafana dashboards)."""
