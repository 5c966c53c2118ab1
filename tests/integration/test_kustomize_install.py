"""The kustomize trees (manifests/crds, manifests/operator, manifests/default and
manifests/overlays/webhook) as a user installs them: ``kubectl kustomize`` (kustomize built
into kubectl) renders each, and ``kubectl apply --server-side --dry-run=server -k`` is
accepted by a real kube-apiserver (nothing stored). The webhook overlay's namespace is
configurable: set in a copy of the tree, it reaches every namespaced object, the RBAC
subjects, the webhook Service reference, the certificate's DNS names and cert-manager's
CA-injection annotation."""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from hack.cluster.kubectl import find_kubectl
from kuberay.kube import Client
from kuberay.testing.crds import install_crds
from tests.integration.test_manifests import _cert_manager_crd_dir

ROOT = Path(__file__).resolve().parents[2]
TREES = ("crds", "operator", "default", "overlays/webhook")
KUBECTL = find_kubectl(install=False)
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="no kubectl (hack/cluster/kubectl.py)")


def kubectl(*args: str) -> subprocess.CompletedProcess[str]:
    assert KUBECTL is not None
    return subprocess.run([str(KUBECTL), *args], capture_output=True, text=True, timeout=180)


def kustomize(directory: Path) -> list[dict[str, Any]]:
    proc = kubectl("kustomize", str(directory))
    assert proc.returncode == 0, proc.stderr
    # libyaml: the CRDs are megabytes of YAML (pure-Python parsing takes minutes)
    return [d for d in yaml.load_all(proc.stdout, Loader=yaml.CSafeLoader) if d]


def _copy_with_namespace(tmp_path: Path, namespace: str) -> Path:
    """A copy of manifests/ whose webhook overlay installs into ``namespace``."""
    copy = tmp_path / "manifests"
    shutil.copytree(ROOT / "manifests", copy)
    overlay = copy / "overlays" / "webhook" / "kustomization.yaml"
    text = overlay.read_text()
    assert "\nnamespace: ray-system\n" in text
    overlay.write_text(text.replace("\nnamespace: ray-system\n", f"\nnamespace: {namespace}\n"))
    return copy / "overlays" / "webhook"


@needs_kubectl
@pytest.mark.parametrize("tree", TREES)
def test_trees_render(tree: str) -> None:
    objs = kustomize(ROOT / "manifests" / tree)
    kinds = {o["kind"] for o in objs}
    crds = {o["metadata"]["name"] for o in objs if o["kind"] == "CustomResourceDefinition"}
    if tree in ("crds", "default", "overlays/webhook"):
        assert crds == {
            f"{k}.ray.io" for k in ("rayclusters", "rayjobs", "rayservices", "raycronjobs")
        }
    if tree != "crds":
        assert {"Namespace", "Deployment", "ClusterRole", "ServiceAccount"} <= kinds
    if tree == "overlays/webhook":
        assert {"ValidatingWebhookConfiguration", "Certificate", "Issuer"} <= kinds
        deployment = next(o for o in objs if o["kind"] == "Deployment")
        [container] = deployment["spec"]["template"]["spec"]["containers"]
        assert {"name": "ENABLE_WEBHOOKS", "value": "true"} in container["env"]
        assert {"name": "PYTHONUNBUFFERED", "value": "1"} in container["env"]  # merged, kept


@needs_kubectl
async def test_webhook_overlay_in_another_namespace_dry_run_applies(
    kclient: Client, kubeconfig_path: Path, tmp_path: Path
) -> None:
    namespace = f"t-kz-{uuid.uuid4().hex[:6]}"
    overlay = _copy_with_namespace(tmp_path, namespace)
    objs = kustomize(overlay)
    for obj in objs:
        meta = obj["metadata"]
        if obj["kind"] == "Namespace":
            assert meta["name"] == namespace
        elif meta.get("namespace") is not None:
            assert meta["namespace"] == namespace, obj["kind"]
        for subject in obj.get("subjects") or ():
            assert subject["namespace"] == namespace
    certificate = next(o for o in objs if o["kind"] == "Certificate")
    assert certificate["spec"]["dnsNames"] == [
        f"kuberay-operator-webhook.{namespace}.svc",
        f"kuberay-operator-webhook.{namespace}.svc.cluster.local",
    ]
    for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        config = next(o for o in objs if o["kind"] == kind)
        annotation = config["metadata"]["annotations"]["cert-manager.io/inject-ca-from"]
        assert annotation == f"{namespace}/kuberay-operator-serving-cert"
        services = {w["clientConfig"]["service"]["namespace"] for w in config["webhooks"]}
        assert services == {namespace}

    await install_crds(kclient)
    await install_crds(kclient, directory=_cert_manager_crd_dir())
    # a dry run does not create the Namespace the other objects need: create it for real
    await kclient.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    try:
        proc = kubectl(
            "--kubeconfig",
            str(kubeconfig_path),
            "apply",
            "--server-side",
            "--force-conflicts",
            "--dry-run=server",
            "-k",
            str(overlay),
        )
        assert proc.returncode == 0, proc.stderr
        applied = [line for line in proc.stdout.splitlines() if "(server dry run)" in line]
        assert len(applied) == len(objs), proc.stdout
    finally:
        await kclient.delete("v1", "Namespace", namespace)
