"""The slim operator image (``hack/release/images.py operator``): no Ray, non-root, built only from
the files :mod:`image_context` lists (never ``.venv``, ``.git`` or ``.run``), with exactly the
dependencies ``requirements/runtime.lock`` pins (in its digest), tagged as the
chart and the manifests name it, which run it with a read-only root filesystem."""

from __future__ import annotations

import json
import re
import tarfile
from pathlib import Path

import pytest
import yaml

import kuberay
from hack.release import image_context, images, lock, operator_image, sbom

ROOT = Path(__file__).resolve().parents[3]
SITE = re.compile(r"^\./opt/kuberay/lib/python3\.\d+/site-packages/")
DIST_INFO = re.compile(r"^([^/]+)-([^/-]+)\.dist-info$")
MiB = 1 << 20


def test_context_leaves_out_local_state(tmp_path: Path) -> None:
    for rel in (
        "pyproject.toml",
        "kuberay/__init__.py",
        "kuberay/cmd/operator.py",
        ".venv/lib/site.py",
        ".git/HEAD",
        ".run/kubeconfig",
        "kuberay/__pycache__/x.cpython-311.pyc",
        "kuberay/cmd/.mypy_cache/x.json",
        "kuberay.egg-info/PKG-INFO",
        "tests/test_x.py",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    files = {str(p.relative_to(tmp_path)) for p in image_context.context_files(tmp_path)}
    assert files == {"pyproject.toml", "kuberay/__init__.py", "kuberay/cmd/operator.py"}


def test_config_is_non_root_with_the_operator_as_entrypoint() -> None:
    config = operator_image.operator_config()
    assert config["User"] == "1000:1000"
    assert config["Entrypoint"] == ["kuberay-operator"]
    assert "PYTHONDONTWRITEBYTECODE=1" in config["Env"]  # type: ignore[operator]


def test_chart_and_manifests_default_to_the_built_image() -> None:
    tags = set(operator_image.operator_tags())
    assert f"localhost/kuberay-python/operator:{kuberay.__version__}" in tags
    deployment = yaml.safe_load((ROOT / "manifests/operator/deployment.yaml").read_text())
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] in tags
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    kustomization = yaml.safe_load((ROOT / "manifests/operator/kustomization.yaml").read_text())
    [image] = kustomization["images"]
    assert f"{image['newName']}:{image['newTag']}" in tags
    chart = ROOT / "manifests/helm/kuberay-operator"
    values = yaml.safe_load((chart / "values.yaml").read_text())
    app_version = yaml.safe_load((chart / "Chart.yaml").read_text())["appVersion"]
    assert f"{values['image']['repository']}:{values['image']['tag'] or app_version}" in tags
    assert values["securityContext"]["readOnlyRootFilesystem"] is True
    assert values["securityContext"]["runAsNonRoot"] is True


def test_built_archive() -> None:
    """The archive built for the current sources: no Ray, no pip, the package, user 1000,
    under 150 MiB."""
    archive = images.archive_path("operator")
    if not archive.exists():
        pytest.skip(f"{archive.name} not built for these sources (make images builds it)")
    assert archive.stat().st_size < 150 * MiB
    with tarfile.open(archive) as outer:
        manifest = json.load(outer.extractfile("manifest.json"))  # type: ignore[arg-type]
        assert manifest[0]["RepoTags"] == list(operator_image.operator_tags())
        config = json.load(outer.extractfile(manifest[0]["Config"]))  # type: ignore[arg-type]
        assert config["config"] == operator_image.operator_config()
        names: set[str] = set()
        passwd = b""
        for layer_name in manifest[0]["Layers"]:
            layer_file = outer.extractfile(layer_name)
            assert layer_file is not None
            with tarfile.open(fileobj=layer_file, mode="r|") as layer:
                for member in layer:
                    names.add(member.name)
                    if member.name == "./etc/passwd":
                        f = layer.extractfile(member)
                        assert f is not None
                        passwd = f.read()
    site = {SITE.sub("", n) for n in names if SITE.match(n)}
    assert "kuberay/cmd/operator.py" in site
    assert not any(n == "ray" or n.startswith("ray/") for n in site), "Ray in the operator"
    assert not any(n.startswith("pip/") for n in site)
    assert not any("/.venv/" in n or "/.git/" in n or "/.run/" in n for n in names)
    assert "./opt/kuberay/bin/kuberay-operator" in names
    assert "./home/ray/anaconda3" not in names
    assert re.search(rb"^kuberay:x:1000:1000:", passwd, re.M), passwd
    # the Python packages are exactly the lock's, at its versions (the SBOM lists the same)
    installed = {
        lock.normalize(match.group(1)): match.group(2)
        for match in map(DIST_INFO.match, site)
        if match is not None and match.group(1) != "kuberay"
    }
    assert installed == lock.read_lock()
    # the SBOM's Debian packages: the image's own dpkg status, kept beside the archive
    debs = {name for name, _, _ in sbom.dpkg_packages(images.operator_dpkg_status())}
    assert {"python3", "ca-certificates", "libc6"} <= debs


def test_the_lock_is_in_the_image_digest(tmp_path: Path) -> None:
    files = {str(p.relative_to(ROOT)) for p in images._package_files()}
    assert "requirements/runtime.lock" in files  # copied in, and hashed into the archive name
    assert lock.LOCK in images.collector_files()  # the history images' constraints, hashed too
    (tmp_path / "requirements").mkdir()
    (tmp_path / "requirements/runtime.lock").write_text("h11==0.16.0\n")
    [path] = image_context.context_files(tmp_path)
    assert path.name == "runtime.lock"


def test_image_installs_every_dependency_but_kubernetes_asyncio() -> None:
    deps = operator_image.operator_dependencies()
    assert not any(d.lower().startswith("kubernetes-asyncio") for d in deps)
    assert any(d.startswith("aiohttp") for d in deps) and any(d.startswith("orjson") for d in deps)
    assert len(deps) == len(kuberay_dependencies()) - 1


def kuberay_dependencies() -> list[str]:
    import tomllib

    deps: list[str] = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "dependencies"
    ]
    return deps


def test_operator_runs_without_kubernetes_asyncio(tmp_path: Path) -> None:
    """What the image's interpreter sees: the operator's entry module imports, and a token
    kubeconfig loads, with kubernetes_asyncio unimportable."""
    import subprocess
    import sys

    blocker = tmp_path / "kubernetes_asyncio.py"
    blocker.write_text("raise ImportError('not in the operator image')\n")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    code = (
        "import asyncio\n"
        "import kuberay.cmd.operator_run\n"
        "from kuberay.kube import Client\n"
        f"c = asyncio.run(Client.from_kubeconfig({str(kubeconfig)!r}))\n"
        "print('ok')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": f"{tmp_path}:{ROOT}", "PATH": "/usr/bin:/bin"},
    )
    assert proc.stdout.strip() == "ok", proc.stderr
