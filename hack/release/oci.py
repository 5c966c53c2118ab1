"""Docker archives (``docker save``'s format) for hack/release/images.py, and their OCI layouts.

:func:`write_docker_archive` writes one (manifest.json, the config, a layer.tar per layer);
:func:`archive_tags` reads its tags back, :func:`extract_layers` its layers;
:func:`derive_archive` writes another image over the same layers; :func:`docker_to_oci` turns
it into an OCI image layout archive.

The result is a tar holding ``oci-layout``, ``index.json`` and ``blobs/sha256/<digest>`` for
the image config, its manifest and each (uncompressed) layer, with one index entry per tag
(``org.opencontainers.image.ref.name``), as ``skopeo copy docker-archive:... oci-archive:...``
writes it; ``ctr images import``, ``podman load`` and ``skopeo`` read it.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import tempfile
from pathlib import Path
from typing import Any

MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"
CONFIG_TYPE = "application/vnd.oci.image.config.v1+json"
LAYER_TYPE = "application/vnd.oci.image.layer.v1.tar"
CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    """The hex SHA-256 of the file at ``path``."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def write_docker_archive(
    out: Path, layers: list[Path], config: dict[str, object], tags: tuple[str, ...]
) -> None:
    """A `docker save`-style tar: manifest.json, config JSON, one layer.tar per layer."""
    diff_ids = [f"sha256:{sha256_file(layer)}" for layer in layers]
    image_config = {
        "architecture": "amd64",
        "os": "linux",
        "created": "2026-01-01T00:00:00Z",
        "config": config,
        "rootfs": {"type": "layers", "diff_ids": diff_ids},
        "history": [{"created_by": "hack/images.py"} for _ in layers],
    }
    config_bytes = json.dumps(image_config, sort_keys=True).encode()
    config_name = hashlib.sha256(config_bytes).hexdigest() + ".json"
    layer_names = [f"{d.split(':')[1]}/layer.tar" for d in diff_ids]
    manifest = [{"Config": config_name, "RepoTags": list(tags), "Layers": layer_names}]
    tmp = out.with_suffix(f".{os.getpid()}.partial")
    with tarfile.open(tmp, "w") as tar:
        for name, data in (
            ("manifest.json", json.dumps(manifest).encode()),
            (config_name, config_bytes),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, layer in zip(layer_names, layers, strict=True):
            tar.add(str(layer), arcname=name)
    tmp.rename(out)


def archive_tags(archive: Path) -> list[str]:
    """The RepoTags of a docker archive written by write_docker_archive."""
    with tarfile.open(archive) as tar:
        f = tar.extractfile("manifest.json")
        assert f is not None
        return [t for entry in json.load(f) for t in entry.get("RepoTags") or ()]


def extract_layers(archive: Path, directory: Path) -> list[Path]:
    """The layers of a docker archive written by write_docker_archive, copied into
    ``directory`` as ``layer-<i>.tar`` (bottom first), byte for byte: an image written over
    them shares their digests."""
    out: list[Path] = []
    with tarfile.open(archive) as tar:
        f = tar.extractfile("manifest.json")
        assert f is not None
        [entry] = json.load(f)
        for i, name in enumerate(entry["Layers"]):
            member = tar.extractfile(name)
            assert member is not None
            path = directory / f"layer-{i}.tar"
            with path.open("wb") as dst:
                while chunk := member.read(CHUNK):
                    dst.write(chunk)
            out.append(path)
    return out


def derive_archive(base: Path, out: Path, config: dict[str, object], tags: tuple[str, ...]) -> None:
    """Write ``out``: the image of the docker archive ``base`` (its layers, byte for byte)
    with ``config`` and ``tags`` instead of its own."""
    with tempfile.TemporaryDirectory(prefix="kuberay-derive-", dir=out.parent) as tmp:
        write_docker_archive(out, extract_layers(base, Path(tmp)), config, tags)


def _digest_of(stream: Any) -> tuple[str, int]:
    h, size = hashlib.sha256(), 0
    while chunk := stream.read(CHUNK):
        h.update(chunk)
        size += len(chunk)
    return f"sha256:{h.hexdigest()}", size


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def docker_to_oci(docker_archive: Path, out: Path) -> dict[str, Any]:
    """Write ``out`` (an OCI layout tar) from ``docker_archive``; returns its index.json."""
    with tarfile.open(docker_archive) as src:
        manifest_file = src.extractfile("manifest.json")
        assert manifest_file is not None
        [entry] = json.load(manifest_file)
        config_file = src.extractfile(entry["Config"])
        assert config_file is not None
        config = config_file.read()
        layers: list[dict[str, Any]] = []
        for name in entry["Layers"]:
            member = src.extractfile(name)
            assert member is not None
            digest, size = _digest_of(member)
            layers.append({"mediaType": LAYER_TYPE, "digest": digest, "size": size, "_name": name})
        manifest = {
            "schemaVersion": 2,
            "mediaType": MANIFEST_TYPE,
            "config": {
                "mediaType": CONFIG_TYPE,
                "digest": f"sha256:{hashlib.sha256(config).hexdigest()}",
                "size": len(config),
            },
            "layers": [{k: v for k, v in layer.items() if k != "_name"} for layer in layers],
        }
        manifest_bytes = json.dumps(manifest, separators=(",", ":")).encode()
        manifest_digest = f"sha256:{hashlib.sha256(manifest_bytes).hexdigest()}"
        index = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [
                {
                    "mediaType": MANIFEST_TYPE,
                    "digest": manifest_digest,
                    "size": len(manifest_bytes),
                    "annotations": {"org.opencontainers.image.ref.name": tag},
                    "platform": {"architecture": "amd64", "os": "linux"},
                }
                for tag in entry.get("RepoTags") or ()
            ],
        }
        tmp = out.with_suffix(out.suffix + ".partial")
        with tarfile.open(tmp, "w") as tar:
            _add_bytes(tar, "oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
            _add_bytes(tar, "index.json", json.dumps(index, indent=2).encode())
            _add_bytes(tar, f"blobs/sha256/{manifest_digest[7:]}", manifest_bytes)
            _add_bytes(tar, f"blobs/sha256/{manifest['config']['digest'][7:]}", config)  # type: ignore[index]
            for layer in layers:
                info = tarfile.TarInfo(f"blobs/sha256/{layer['digest'][7:]}")
                info.size = layer["size"]
                info.mode = 0o644
                member = src.extractfile(layer["_name"])
                assert member is not None
                tar.addfile(info, member)
        tmp.rename(out)
    return index
