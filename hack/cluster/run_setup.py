"""``make run``'s cluster set-up (``hack/cluster/run.py``): the ray.io CRDs, the Gateway API's and
the operator's RBAC installed by server-side apply, and the kubeconfig the operator connects
with (a ServiceAccount token from the TokenRequest API, or the cluster admin's)."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CRD_DIR = ROOT / "manifests" / "crds"
RBAC_DIR = ROOT / "manifests" / "rbac"
FIELD_MANAGER = "kuberay-run"
OPERATOR_SA = "kuberay-operator"
OPERATOR_KUBECONFIG = "operator.kubeconfig"
TOKEN_SECONDS = 24 * 3600


class SetupError(RuntimeError):
    """Installing the manifests or getting the operator's token failed (one line)."""


@dataclass(frozen=True)
class OperatorIdentity:
    """How the operator connects: its kubeconfig and the namespace of its Lease."""

    kubeconfig: Path
    lease_namespace: str
    who: str


# --------------------------------------------------------------------------- apiserver


class AdminApi:
    """Just enough of a synchronous admin client: discovery, server-side apply, token."""

    def __init__(self, cp: Any) -> None:
        self.cp = cp
        self.server: str = cp.server
        self.ctx: ssl.SSLContext = cp.ssl_context()
        self._resources: dict[str, dict[str, tuple[str, bool]]] = {}

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = "application/json",
    ) -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        req = urllib.request.Request(self.server + path, data=data, headers=headers, method=method)
        with urllib.request.urlopen(req, timeout=30, context=self.ctx) as resp:
            raw = resp.read()
        return json.loads(raw) if raw else None

    def _discover(self, api_version: str) -> dict[str, tuple[str, bool]]:
        if api_version not in self._resources:
            prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
            found: dict[str, tuple[str, bool]] = {}
            with contextlib.suppress(urllib.error.HTTPError):
                for res in self.call("GET", prefix).get("resources") or ():
                    if "/" not in res["name"]:
                        found[res["kind"]] = (res["name"], bool(res["namespaced"]))
            self._resources[api_version] = found
        return self._resources[api_version]

    def path(self, api_version: str, kind: str, name: str, namespace: str | None) -> str:
        found = self._discover(api_version).get(kind)
        if found is None:
            raise SetupError(f"the apiserver serves no {kind} in {api_version}")
        plural, namespaced = found
        prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        where = f"/namespaces/{namespace or 'default'}" if namespaced else ""
        return f"{prefix}{where}/{plural}/{name}"

    def namespaced(self, api_version: str, kind: str) -> bool:
        found = self._discover(api_version).get(kind)
        return bool(found and found[1])

    def apply(self, doc: Mapping[str, Any]) -> None:
        meta = doc.get("metadata") or {}
        path = self.path(doc["apiVersion"], doc["kind"], meta["name"], meta.get("namespace"))
        try:
            self.call(
                "PATCH",
                f"{path}?fieldManager={FIELD_MANAGER}&force=true",
                doc,
                "application/apply-patch+yaml",
            )
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:300]
            raise SetupError(
                f"applying {doc['kind']} {meta['name']}: {exc.code} {detail}"
            ) from None

    def ensure_namespace(self, name: str) -> None:
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        try:
            self.call("POST", "/api/v1/namespaces", body)
        except urllib.error.HTTPError as exc:
            if exc.code != 409:
                raise SetupError(f"creating namespace {name}: {exc.code}") from None

    def wait_crds_established(self, names: Sequence[str], timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        for name in names:
            path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"
            while True:
                crd = self.call("GET", path)
                # Right after the create the status exists with "conditions": null.
                conditions = (crd.get("status") or {}).get("conditions") or []
                conds = {c["type"]: c["status"] for c in conditions}
                if conds.get("Established") == "True":
                    break
                if time.monotonic() > deadline:
                    raise SetupError(f"CRD {name} not Established within {timeout:.0f}s")
                time.sleep(0.2)

    def token(self, namespace: str, service_account: str, seconds: int) -> str:
        body = {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenRequest",
            "spec": {"expirationSeconds": seconds},
        }
        path = f"/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token"
        try:
            result = self.call("POST", path, body)
        except urllib.error.HTTPError as exc:
            raise SetupError(
                f"TokenRequest for {namespace}/{service_account}: {exc.code}"
            ) from None
        return str(result["status"]["token"])


def _documents(directory: Path) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for path in sorted(directory.glob("*.yaml")) + sorted(directory.glob("*.yml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if isinstance(doc, dict) and doc.get("apiVersion") and doc.get("kind"):
                if doc["kind"] == "Kustomization":
                    continue
                docs.append(doc)
    return docs


def _third_party_crds() -> list[dict[str, Any]]:
    """The Gateway API CRDs (hack/build/fetch_crds.py), for the RayService incremental
    upgrade. cert-manager's are left out: without cert-manager running they would only make
    mTLS clusters wait for certificates nobody signs."""
    from hack.build import fetch_crds

    docs: list[dict[str, Any]] = []
    docs.extend(_documents(fetch_crds.fetch("gateway-api")))
    return docs


def install_crds(api: AdminApi) -> list[str]:
    """Apply every CRD of manifests/crds and the Gateway API's (fetched from its Go module)
    and wait until they are Established."""
    names = []
    for doc in _documents(CRD_DIR) + _third_party_crds():
        api.apply(doc)
        names.append(doc["metadata"]["name"])
    api.wait_crds_established(names)
    return names


def install_rbac(api: AdminApi) -> tuple[str, str] | None:
    """Apply manifests/rbac; the (namespace, name) of the operator's ServiceAccount.

    Namespaced objects without a namespace go into the ServiceAccount's namespace (which
    is created if needed). None when there is no RBAC (or no ServiceAccount) to use.
    """
    docs = _documents(RBAC_DIR) if RBAC_DIR.is_dir() else []
    accounts = [d for d in docs if d["kind"] == "ServiceAccount"]
    if not accounts:
        return None
    preferred = [d for d in accounts if d["metadata"]["name"] == OPERATOR_SA] or accounts
    sa = preferred[0]["metadata"]
    sa_ns = str(sa.get("namespace") or "default")
    for doc in docs:
        if doc["kind"] == "Namespace":
            api.apply(doc)
    namespaces = {sa_ns} | {
        str(d["metadata"]["namespace"]) for d in docs if d["metadata"].get("namespace")
    }
    for namespace in sorted(namespaces):
        api.ensure_namespace(namespace)
    for doc in docs:
        if doc["kind"] == "Namespace":
            continue
        meta = doc.setdefault("metadata", {})
        if api.namespaced(doc["apiVersion"], doc["kind"]) and not meta.get("namespace"):
            meta["namespace"] = sa_ns
            for subject in doc.get("subjects") or ():
                if subject.get("kind") == "ServiceAccount" and not subject.get("namespace"):
                    subject["namespace"] = sa_ns
        api.apply(doc)
    return sa_ns, str(sa["name"])


def write_token_kubeconfig(path: Path, server: str, ca_pem: bytes, token: str) -> None:
    """A kubeconfig (mode 0600) authenticating with a bearer token."""
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "kuberay-local",
                "cluster": {
                    "server": server,
                    "certificate-authority-data": base64.b64encode(ca_pem).decode(),
                },
            }
        ],
        "users": [{"name": "kuberay-operator", "user": {"token": token}}],
        "contexts": [
            {
                "name": "kuberay-operator",
                "context": {"cluster": "kuberay-local", "user": "kuberay-operator"},
            }
        ],
        "current-context": "kuberay-operator",
    }
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)


def prepare_cluster(cp: Any, *, as_admin: bool) -> OperatorIdentity:
    """Install CRDs and RBAC; how the operator should connect."""
    api = AdminApi(cp)
    crds = install_crds(api)
    print(
        f"run: installed {len(crds)} CRDs from {CRD_DIR.relative_to(ROOT)} and the Gateway API",
        file=sys.stderr,
    )
    account = install_rbac(api)
    if account is None:
        print(
            f"run: no ServiceAccount in {RBAC_DIR.relative_to(ROOT)}; "
            "the operator runs as cluster admin",
            file=sys.stderr,
        )
    if account is None or as_admin:
        return OperatorIdentity(cp.kubeconfig, "default", "cluster admin")
    sa_ns, sa_name = account
    token = api.token(sa_ns, sa_name, TOKEN_SECONDS)
    kubeconfig = cp.dir / OPERATOR_KUBECONFIG
    write_token_kubeconfig(kubeconfig, cp.server, cp.certs.serving_ca.read_bytes(), token)
    return OperatorIdentity(
        kubeconfig, sa_ns, f"system:serviceaccount:{sa_ns}:{sa_name} (24h token)"
    )
