"""The local backend's own rules (the shared contract is in
tests/integration/historyserver/storage): keys never leave the root, a put is atomic, and
the file system's limits surface as ``StorageError``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kuberay.historyserver.storage import NotFound, StorageError
from kuberay.historyserver.storage.local import TEMP_SUFFIX, LocalConfig, LocalStore

ESCAPING_KEYS = (
    "",
    "/etc/passwd",
    "../outside",
    "a/../../outside",
    "a/./b",
    "a//b",
    "a/",
    "a/b\0c",
    f"a/x{TEMP_SUFFIX}",
)


@pytest.mark.parametrize("key", ESCAPING_KEYS)
async def test_keys_that_could_escape_the_root_are_refused(tmp_path: Path, key: str) -> None:
    store = LocalStore(tmp_path / "root")
    with pytest.raises(StorageError) as caught:
        await store.put(key, b"x")
    assert not isinstance(caught.value, NotFound)
    for call in (store.get(key), store.exists(key), store.delete(key)):
        with pytest.raises(StorageError):
            await call
    with pytest.raises(StorageError):
        async for _ in store.open(key):
            pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["root"]
    assert list((tmp_path / "root").iterdir()) == []


@pytest.mark.parametrize("prefix", ["../", "/abs", "a//", "a/../b/"])
async def test_prefixes_that_could_escape_the_root_are_refused(tmp_path: Path, prefix: str) -> None:
    store = LocalStore(tmp_path)
    with pytest.raises(StorageError):
        await store.list(prefix)


async def test_an_object_cannot_also_be_a_directory(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    await store.put("a", b"file")
    with pytest.raises(StorageError, match="parent of it is an object"):
        await store.put("a/b", b"x")
    await store.put("d/e", b"x")
    with pytest.raises(StorageError, match="stored under it"):
        await store.put("d", b"x")
    assert await store.get("a") == b"file"
    assert await store.get("d/e") == b"x"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(TEMP_SUFFIX)] == []


async def test_a_failed_streamed_put_leaves_the_old_object_and_no_temp_file(
    tmp_path: Path,
) -> None:
    store = LocalStore(tmp_path)
    await store.put("k", b"old")

    async def broken() -> AsyncIterator[bytes]:
        yield b"new, partial"
        raise RuntimeError("source failed")

    with pytest.raises(RuntimeError):
        await store.put("k", broken())
    assert await store.get("k") == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k"]


async def test_temp_files_of_puts_in_flight_are_never_listed(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    await store.put("dir/real", b"1")
    (tmp_path / "dir" / f".abc{TEMP_SUFFIX}").write_bytes(b"half written")
    page = await store.list("dir/")
    assert [o.key for o in page.objects] == ["dir/real"]
    assert [o.key for o in (await store.list("", delimiter=None)).objects] == ["dir/real"]


async def test_delete_prunes_empty_directories_but_not_the_root(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "root")
    await store.put("a/b/c/d", b"1")
    await store.put("a/keep", b"2")
    await store.delete("a/b/c/d")
    assert sorted(p.name for p in (tmp_path / "root" / "a").iterdir()) == ["keep"]
    await store.delete("a/keep")
    assert (tmp_path / "root").is_dir()
    assert list((tmp_path / "root").iterdir()) == []


async def test_an_empty_directory_is_not_a_listed_prefix(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    (tmp_path / "left" / "empty").mkdir(parents=True)
    await store.put("real/x", b"1")
    assert (await store.list("")).prefixes == ("real/",)


async def test_concurrent_puts_and_deletes_in_one_directory(tmp_path: Path) -> None:
    """A delete pruning a directory never makes a concurrent put into it fail."""
    store = LocalStore(tmp_path)

    async def churn(i: int) -> None:
        for _ in range(20):
            await store.put(f"dir/sub/{i}", b"x")
            await store.delete(f"dir/sub/{i}")

    await asyncio.gather(*(churn(i) for i in range(8)))
    await store.put("dir/sub/final", b"ok")
    assert await store.get("dir/sub/final") == b"ok"


async def test_a_put_survives_its_directory_pruned_inside_mkdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mkdir(exist_ok=True) raises FileExistsError when a delete prunes the directory between
    its mkdir and is_dir: the put retries instead of blaming an object in the way."""
    store = LocalStore(tmp_path)
    real_mkdir = Path.mkdir
    raced: list[Path] = []

    def mkdir_losing_a_race(self: Path, *args: object, **kwargs: object) -> None:
        if not raced:
            raced.append(self)
            raise FileExistsError(17, "File exists", str(self))
        real_mkdir(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", mkdir_losing_a_race)
    await store.put("dir/sub/x", b"ok")
    assert raced and await store.get("dir/sub/x") == b"ok"


def test_config_needs_a_directory() -> None:
    assert LocalConfig.from_sources({"LOCAL_STORAGE_DIR": "/x"}, None).directory == "/x"
    assert LocalConfig.from_sources({"LOCAL_STORAGE_DIR": "/x"}, {"localDir": "/y"}).directory == (
        "/y"
    )
    with pytest.raises(StorageError, match="LOCAL_STORAGE_DIR"):
        LocalConfig.from_sources({}, None)


async def test_bad_arguments(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    await store.put("k", b"x")
    with pytest.raises(ValueError):
        await store.list("", limit=0)
    with pytest.raises(ValueError):
        await store.list("", limit=1001)
    with pytest.raises(StorageError):
        await store.list("", delimiter="|")
    with pytest.raises(ValueError):
        async for _ in store.open("k", chunk_size=0):
            pass
