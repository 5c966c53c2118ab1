"""Fixtures for the storage contract suite: one real server per backend (started once per
session, on 127.0.0.1 only, and only when a test of that backend runs) and ``backend``, a
test's view of one backend parametrized over all of them.

Each test gets its own root dir (``STORAGE_ROOT_DIR``), so tests share a bucket without
seeing each other's keys. fake-gcs-server and Azurite come from ``hack/`` build scripts
(``make test`` starts them in the background beforehand; a test waits for that build, or
builds itself when none ran). They are skipped, with the build's error, only when the
server cannot be built or installed here (no Go or npm, or the registry unreachable).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from kuberay.historyserver.storage import ObjectStore
from kuberay.historyserver.storage.config import open_store, storage_settings
from tests.integration.historyserver.storage.servers import (
    ServerError,
    create_gcs_bucket,
    hack_module,
    start_azurite,
    start_fake_gcs,
    start_moto,
)

BUCKET = "kuberay-contract"
#: the backends the contract suite runs against a real server (``aliyunoss`` has none
#: here: see tests/unit/historyserver/storage/test_oss_config.py)
CONTRACT_BACKENDS = ("local", "s3", "gcs", "azureblob")


@pytest.fixture(scope="session")
def moto_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """moto's S3 server for the session."""
    try:
        process, endpoint = start_moto(tmp_path_factory.mktemp("moto"))
    except ServerError as exc:
        pytest.fail(f"moto_server did not start: {exc}", pytrace=False)
    try:
        yield endpoint
    finally:
        process.stop()


def _built(script: str, what: str) -> Path:
    module = hack_module(script)
    try:
        return Path(module.build())
    except module.BuildError as exc:
        pytest.skip(f"{what} cannot be built or installed here: {exc}")


@pytest.fixture(scope="session")
def gcs_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """fake-gcs-server for the session, with the contract bucket created."""
    binary = _built("build.build_fake_gcs_server", "fake-gcs-server")
    try:
        process, endpoint = start_fake_gcs(binary, tmp_path_factory.mktemp("fake-gcs"))
    except ServerError as exc:
        pytest.fail(f"fake-gcs-server did not start: {exc}", pytrace=False)
    try:
        create_gcs_bucket(endpoint, BUCKET)
        yield endpoint
    finally:
        process.stop()


@pytest.fixture(scope="session")
def azurite_connection_string(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Azurite's blob service for the session; its connection string."""
    binary = _built("build.install_azurite", "Azurite")
    try:
        process, connection = start_azurite(binary, tmp_path_factory.mktemp("azurite"))
    except ServerError as exc:
        pytest.fail(f"Azurite did not start: {exc}", pytrace=False)
    try:
        yield connection
    finally:
        process.stop()


def backend_env(name: str, request: pytest.FixtureRequest, directory: Path) -> dict[str, str]:
    """The env that configures backend ``name`` against its test server (the server's
    fixture is started on first use)."""
    if name == "local":
        return {"LOCAL_STORAGE_DIR": str(directory / "store")}
    if name == "s3":
        return {
            "S3_BUCKET": BUCKET,
            "S3_ENDPOINT": request.getfixturevalue("moto_endpoint"),
            "S3_REGION": "us-east-1",
            "S3FORCE_PATH_STYLE": "true",
            "S3DISABLE_SSL": "true",
            "AWS_ACCESS_KEY_ID": "contract-test",
            "AWS_SECRET_ACCESS_KEY": "contract-test",
        }
    if name == "gcs":
        return {
            "GCS_BUCKET": BUCKET,
            "STORAGE_EMULATOR_HOST": request.getfixturevalue("gcs_endpoint"),
        }
    if name == "azureblob":
        return {
            "AZURE_STORAGE_CONNECTION_STRING": request.getfixturevalue("azurite_connection_string"),
            "AZURE_STORAGE_CONTAINER": BUCKET,
        }
    raise AssertionError(f"no test server for {name}")


@attrs.define
class Backend:
    """One backend under test: ``store`` is rooted at a dir of this test's own;
    ``open(root_dir)`` opens another store on the same bucket (closed after the test)."""

    name: str
    store: ObjectStore
    root: str
    open: Callable[[str], Any]


@pytest.fixture(params=CONTRACT_BACKENDS)
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    """Each contract test once per backend, against that backend's real server."""
    name = request.param
    env = backend_env(name, request, tmp_path)
    opened: list[ObjectStore] = []

    async def open_rooted(root_dir: str) -> ObjectStore:
        store = await open_store(storage_settings(name, root_dir=root_dir, env=env))
        opened.append(store)
        return store

    root = f"contract-{uuid.uuid4().hex[:10]}"
    try:
        yield Backend(name=name, store=await open_rooted(root), root=root, open=open_rooted)
    finally:
        for store in opened:
            await store.close()
