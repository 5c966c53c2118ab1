"""What the compute-template middleware raises; the proxy turns each into an answer."""

from __future__ import annotations

from kuberay.apiserver.kube_calls import KubeAnswer


class TemplateMissing(Exception):
    """A group names a template that cannot be had: no such template in the namespace, or a
    name that cannot be one. The proxy answers 422 with :attr:`message` as ``text/plain``
    (KubeRay's ``http.Error`` body, newline added by the proxy)."""

    def __init__(self, name: str, namespace: str, detail: str = "") -> None:
        self.name = name
        self.namespace = namespace
        self.detail = detail or (
            f'NotFoundError: Compute template {name} not found: configmaps "{name}" not found'
        )
        super().__init__(self.message)

    @property
    def message(self) -> str:
        """KubeRay's text for the failed lookup."""
        return (
            f"Cannot get compute template for name '{self.name}' in namespace "
            f"'{self.namespace}', error: {self.detail}"
        )


class BadBody(Exception):
    """The body cannot be read as one JSON or YAML object within the size limit: answered
    400 with :attr:`message` (KubeRay's text); :attr:`detail` says why, for the log."""

    message = "Failed to convert request body to Golang map object"

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class UpstreamRefused(Exception):
    """The kube-apiserver refused a read made for the caller (403, 401, 5xx...): the proxy
    returns :attr:`answer` unchanged, so the caller sees the apiserver's own Status."""

    def __init__(self, answer: KubeAnswer) -> None:
        super().__init__(f"the kube-apiserver answered {answer.status}")
        self.answer = answer
