"""The API server's image (``hack/release/images.py apiserver``): the operator image's layer,
byte for byte, with ``kuberay-apiserver`` as its entrypoint and the kuberay-apiserver chart's
default name; its cache key follows the operator's; ``make images`` and ``make dist`` build it;
and, when built for the current sources, the archive itself."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
import yaml

import kuberay
from hack.release import dist, images, oci, operator_image

ROOT = Path(__file__).resolve().parents[3]


def test_tags_are_the_chart_s_and_the_manifests_default() -> None:
    tags = operator_image.apiserver_tags()
    assert tags == (
        f"localhost/kuberay-python/apiserver:{kuberay.__version__}",
        "localhost/kuberay-python/apiserver:latest",
    )
    chart = ROOT / "manifests/helm/kuberay-apiserver"
    values = yaml.safe_load((chart / "values.yaml").read_text())
    app_version = yaml.safe_load((chart / "Chart.yaml").read_text())["appVersion"]
    assert f"{values['image']['repository']}:{values['image']['tag'] or app_version}" == tags[0]


def test_config_is_the_operator_s_with_the_apiserver_as_entrypoint() -> None:
    config = operator_image.apiserver_config()
    assert config["Entrypoint"] == ["kuberay-apiserver"]
    assert "Cmd" not in config  # a Deployment's args are the server's flags
    operator = operator_image.operator_config()
    assert operator["Entrypoint"] == ["kuberay-operator"]
    assert {k: v for k, v in config.items() if k != "Entrypoint"} == {
        k: v for k, v in operator.items() if k != "Entrypoint"
    }
    assert config["User"] == "1000:1000"


def test_make_images_and_make_dist_build_it() -> None:
    assert images.BUILDERS["apiserver"] is images.build_apiserver
    makefile = (ROOT / "Makefile").read_text()
    for target in ("images", "dist"):
        recipe = makefile.split(f"\n{target}:", 1)[1].split("\n\n", 1)[0]
        assert "apiserver" in recipe.split(), target
    assert dist.IMAGES["apiserver"] == "kuberay-apiserver-image"
    assert "kuberay-apiserver" in dist.CHART_NAMES
    dist.check_versions(kuberay.__version__)  # both image-carrying charts name this version


def test_digest_follows_the_operator_image(monkeypatch: pytest.MonkeyPatch) -> None:
    before = images.apiserver_digest()
    assert images.archive_path("apiserver").name == f"apiserver-{before[:12]}.tar"
    monkeypatch.setattr(images, "_package_digest", lambda: "another operator")
    assert images.apiserver_digest() != before


def test_derived_archive_shares_the_base_s_layers(tmp_path: Path) -> None:
    layer = tmp_path / "layer.tar"
    with tarfile.open(layer, "w") as tar:
        hello = tmp_path / "hello"
        hello.write_text("hi\n")
        tar.add(hello, arcname="etc/hello")
    base = tmp_path / "base.tar"
    oci.write_docker_archive(base, [layer], {"Entrypoint": ["/a"]}, ("example.com/a:1",))
    out = tmp_path / "derived.tar"
    oci.derive_archive(base, out, {"Entrypoint": ["/b"]}, ("example.com/b:1",))
    assert oci.archive_tags(out) == ["example.com/b:1"]
    assert _config(out)["config"] == {"Entrypoint": ["/b"]}
    assert _config(out)["rootfs"] == _config(base)["rootfs"]  # the same layer digests
    # no extracted layer left behind
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "base.tar",
        "derived.tar",
        "hello",
        "layer.tar",
    ]


def _config(archive: Path) -> dict[str, object]:
    with tarfile.open(archive) as tar:
        [entry] = json.load(tar.extractfile("manifest.json"))  # type: ignore[arg-type]
        config: dict[str, object] = json.load(tar.extractfile(entry["Config"]))  # type: ignore[arg-type]
        return config


def test_built_archive() -> None:
    archive = images.archive_path("apiserver")
    if not archive.exists():
        pytest.skip(f"{archive.name} not built for these sources (make images builds it)")
    operator = images.archive_path("operator")
    assert oci.archive_tags(archive) == list(operator_image.apiserver_tags())
    config = _config(archive)
    assert config["config"] == operator_image.apiserver_config()
    assert config["rootfs"] == _config(operator)["rootfs"]
    with tarfile.open(archive) as outer:
        [entry] = json.load(outer.extractfile("manifest.json"))  # type: ignore[arg-type]
        [layer_name] = entry["Layers"]
        with tarfile.open(fileobj=outer.extractfile(layer_name), mode="r|") as layer:
            names = {member.name for member in layer}
    assert "./opt/kuberay/bin/kuberay-apiserver" in names  # the entrypoint is there
