"""What the operator sends for the cert-manager Secrets of an mTLS cluster (private keys in
them), on the real apiserver: the mTLS controller reads them metadata-only and adds its owner
reference with a merge patch of ``metadata.ownerReferences`` (answered metadata-only), never a
PUT; what others wrote to the Secrets survives; an unchanged world costs no Secret request.
The RayCluster controller's pod gate still reads the two leaf Secrets whole (it needs their
keys), only while pods are to be created."""

from __future__ import annotations

import collections
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from kuberay.kube import Client, Conflict
from kuberay.reconcile import Request
from tests.helpers import eventually
from tests.integration.mtls.conftest import start_mtls_operator
from tests.integration.mtls.fake_cert_manager import FakeCertManager
from tests.integration.mtls.test_mtls import NAME, certificates, sample, wait_cert
from tests.integration.raycluster.helpers import pods_of, wait_event_reasons
from tests.kuberay_samples import requires_kuberay_samples

METADATA = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"


class Sent(NamedTuple):
    """One request the operator sent for a named Secret."""

    method: str
    secret: str
    accept: str
    body: Any


def record_secret_requests(client: Client) -> list[Sent]:
    """Record every request ``client`` (and its views) sends for one named Secret."""
    sent: list[Sent] = []
    original = client.request

    async def request(method: str, path: str, **kw: Any) -> Any:
        parts = path.split("/")
        if len(parts) >= 2 and parts[-2] == "secrets":
            body = kw.get("body")
            if isinstance(body, bytes):
                body = orjson.loads(body)
            sent.append(Sent(method, parts[-1], kw.get("accept", "application/json"), body))
        return await original(method, path, **kw)

    client.request = request  # type: ignore[method-assign]
    return sent


def summary(sent: list[Sent]) -> dict[str, int]:
    """Counts by method and answer kind (``GET/metadata``, ``PUT/full``, ...)."""
    return dict(
        collections.Counter(
            f"{s.method}/{'metadata' if s.accept == METADATA else 'full'}" for s in sent
        )
    )


async def issue(cm: FakeCertManager, client: Client, namespace: str, name: str) -> None:
    """Issue like cert-manager, retrying when the operator's patch won the race."""
    for _ in range(10):
        try:
            await cm.issue(client, namespace, name)
            return
        except Conflict:
            continue
    raise AssertionError(f"could not issue {name}")


@requires_kuberay_samples
async def test_secret_owner_is_patched_metadata_only_never_put(
    cert_manager_crds: None, kclient: Client, kubeconfig_path: Path, namespace: str
) -> None:
    # Someone else's label, annotation and type on the leaf Secrets, there before the cluster.
    theirs = {"labels": {"team": "someone-else"}, "annotations": {"example.com/note": "keep"}}
    for node_type in ("head", "worker"):
        await kclient.create(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "type": "kubernetes.io/tls",
                "metadata": {
                    "name": f"ray-{node_type}-secret-{NAME}",
                    "namespace": namespace,
                    **theirs,
                },
                "data": {"tls.crt": "", "tls.key": ""},
            }
        )
    op_client = await Client.from_kubeconfig(kubeconfig_path, qps=0, burst=1)
    sent = record_secret_requests(op_client)
    try:
        async with start_mtls_operator(op_client, namespace) as op:
            cluster = await kclient.create(sample(namespace))
            ca_secret = f"{NAME}-ca-secret-{cluster['metadata']['uid'][:8]}"
            cm = FakeCertManager()
            for cert in ("ray-ca-certificate", "ray-head-cert", "ray-worker-cert"):
                await wait_cert(kclient, namespace, f"{cert}-{NAME}", bool, cert)
                await issue(cm, kclient, namespace, f"{cert}-{NAME}")
            certs = await certificates(kclient, namespace)
            secrets = {c["spec"]["secretName"]: c["metadata"]["uid"] for c in certs.values()}
            assert set(secrets) == {
                ca_secret,
                f"ray-head-secret-{NAME}",
                f"ray-worker-secret-{NAME}",
            }

            async def all_owned() -> bool:
                for secret_name, uid in secrets.items():
                    secret = await kclient.get("v1", "Secret", secret_name, namespace)
                    refs = secret["metadata"].get("ownerReferences") or []
                    if [(r["kind"], r["uid"]) for r in refs] != [("Certificate", uid)]:
                        return False
                return True

            await eventually(all_owned, timeout=60, message="every Secret owned")
            await wait_event_reasons(kclient, namespace, NAME, {"MTLSPKIReady"})
            for secret_name in secrets:
                secret = await kclient.get("v1", "Secret", secret_name, namespace)
                assert set(secret["data"]) == {"tls.crt", "tls.key", "ca.crt"}
                assert secret["metadata"]["annotations"]["cert-manager.io/certificate-name"]
                if secret_name != ca_secret:
                    assert secret["type"] == "kubernetes.io/tls"
                    assert secret["metadata"]["labels"] == theirs["labels"]
                    assert secret["metadata"]["annotations"]["example.com/note"] == "keep"
            # pods are created (the pod gate reads the leaf Secrets whole while it does)
            await eventually(lambda: _n_pods(kclient, namespace, 2), timeout=90, message="two pods")
            assert op.mtls is not None
            await op.mtls.reconciler.reconcile(Request(namespace, NAME))
            issued = list(sent)

            # An unchanged world: two more passes send nothing for any Secret.
            for _ in range(2):
                await op.mtls.reconciler.reconcile(Request(namespace, NAME))
            steady = sent[len(issued) :]
    finally:
        await op_client.close()

    print(f"\nSecret requests while issuing: {summary(issued)}; steady passes: {summary(steady)}")
    assert [s for s in sent if s.method == "PUT"] == [], "a Secret was PUT whole"
    patches = [s for s in issued if s.method == "PATCH"]
    assert {s.secret for s in patches} == set(secrets)
    for s in patches:
        assert s.accept == METADATA
        assert set(s.body) == {"metadata"}
        assert set(s.body["metadata"]) == {"ownerReferences", "resourceVersion"}
    # The CA Secret is only the mTLS controller's: read metadata-only, never whole.
    assert {s.accept for s in issued if s.secret == ca_secret} == {METADATA}
    # No write, and no read by the mTLS controller (the only one reading metadata-only).
    assert [s for s in steady if s.method != "GET" or s.accept == METADATA] == [], (
        f"steady passes sent {summary(steady)}"
    )


async def _n_pods(client: Client, namespace: str, n: int) -> bool:
    return len(await pods_of(client, namespace, NAME)) == n
