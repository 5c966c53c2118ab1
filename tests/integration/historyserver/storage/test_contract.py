"""The ``ObjectStore`` contract, run against every backend's real server (``backend``
fixture): what the collector writes and the history server reads must behave the same on a
local directory, S3 (moto), GCS (fake-gcs-server) and Azure Blob (Azurite)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from kuberay.historyserver.storage import ListResult, NotFound, ObjectStore, StorageError
from kuberay.historyserver.storage.base import list_all
from tests.integration.historyserver.storage.conftest import Backend

MIB = 1 << 20


def _payload(size: int, seed: int = 7) -> bytes:
    block = bytes((seed + i * 31) % 251 for i in range(4096))
    return (block * (size // len(block) + 1))[:size]


async def _chunks(data: bytes, size: int) -> AsyncIterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start : start + size]


async def _keys(store: ObjectStore, prefix: str, **kwargs: object) -> list[str]:
    page = await list_all(store, prefix, **kwargs)  # type: ignore[arg-type]
    return [o.key for o in page.objects]


async def test_put_get_roundtrip(backend: Backend) -> None:
    store = backend.store
    await store.put("a/b/hello.txt", b"hello world", content_type="text/plain")
    await store.put("empty", b"")
    assert await store.get("a/b/hello.txt") == b"hello world"
    assert await store.get("empty") == b""


async def test_put_replaces_whole_object(backend: Backend) -> None:
    store = backend.store
    await store.put("k", b"first version, longer")
    await store.put("k", b"second")
    assert await store.get("k") == b"second"
    page = await store.list("")
    assert [(o.key, o.size) for o in page.objects] == [("k", 6)]


async def test_ranged_get_edges(backend: Backend) -> None:
    store = backend.store
    data = bytes(range(100))
    await store.put("r", data)
    assert await store.get("r", byte_range=(0, 10)) == data[:10]
    assert await store.get("r", byte_range=(40, 60)) == data[40:60]
    assert await store.get("r", byte_range=(99, 100)) == data[99:]
    assert await store.get("r", byte_range=(90, 1000)) == data[90:]  # end clipped
    assert await store.get("r", byte_range=(0, 100)) == data
    assert await store.get("r", byte_range=(100, 200)) == b""  # start at the size
    assert await store.get("r", byte_range=(150, 200)) == b""  # start past the size
    assert await store.get("r", byte_range=(5, 5)) == b""
    await store.put("zero", b"")
    assert await store.get("zero", byte_range=(0, 10)) == b""
    with pytest.raises(NotFound):
        await store.get("missing", byte_range=(0, 10))
    with pytest.raises(NotFound):
        await store.get("missing", byte_range=(3, 3))
    with pytest.raises(ValueError):
        await store.get("r", byte_range=(10, 5))
    with pytest.raises(ValueError):
        await store.get("r", byte_range=(-1, 5))


async def test_streamed_put_and_open_of_a_multi_mib_object(backend: Backend) -> None:
    """A 9 MiB log streamed in (past one 8 MiB part: a multipart/block upload where the
    backend has one) and streamed out in bounded chunks."""
    store = backend.store
    data = _payload(9 * MIB + 12345)
    await store.put("logs/big.log", _chunks(data, 300_001))
    chunk_size = 256 * 1024
    received = []
    async for chunk in store.open("logs/big.log", chunk_size=chunk_size):
        assert 0 < len(chunk) <= chunk_size
        received.append(chunk)
    assert len(received) > 1
    assert b"".join(received) == data
    assert (
        await store.get("logs/big.log", byte_range=(8 * MIB - 3, 8 * MIB + 3))
        == data[8 * MIB - 3 : 8 * MIB + 3]
    )


async def test_streamed_put_of_small_and_empty_streams(backend: Backend) -> None:
    store = backend.store
    await store.put("small", _chunks(b"abcdefghij", 3))
    assert await store.get("small") == b"abcdefghij"
    await store.put("none", _chunks(b"", 3))
    assert await store.get("none") == b""
    assert await store.exists("none")


async def test_get_and_open_of_a_missing_key_raise_not_found(backend: Backend) -> None:
    store = backend.store
    with pytest.raises(NotFound):
        await store.get("nope/missing.txt")
    with pytest.raises(NotFound):
        async for _ in store.open("nope/missing.txt"):
            pass
    assert issubclass(NotFound, StorageError)


async def _tree(store: ObjectStore) -> None:
    await asyncio.gather(
        *(
            store.put(key, key.encode())
            for key in (
                "s/x.txt",
                "s/a/1",
                "s/a/2",
                "s/a/deep/3",
                "s/b/4",
                "s/b.txt",
                "s/ba/5",
                "s/c",
                "other/6",
            )
        )
    )


async def test_list_with_delimiter(backend: Backend) -> None:
    store = backend.store
    await _tree(store)
    page = await store.list("s/")
    assert [(o.key, o.size) for o in page.objects] == [
        ("s/b.txt", 7),
        ("s/c", 3),
        ("s/x.txt", 7),
    ]
    assert page.prefixes == ("s/a/", "s/b/", "s/ba/")
    assert page.next_token is None
    partial = await store.list("s/b")  # a partial name, as in an object store
    assert [o.key for o in partial.objects] == ["s/b.txt"]
    assert partial.prefixes == ("s/b/", "s/ba/")
    top = await store.list("")
    assert top.objects == ()
    assert top.prefixes == ("other/", "s/")
    assert await store.list("nothing/here/") == ListResult()


async def test_list_without_delimiter(backend: Backend) -> None:
    store = backend.store
    await _tree(store)
    assert await _keys(store, "s/", delimiter=None) == [
        "s/a/1",
        "s/a/2",
        "s/a/deep/3",
        "s/b.txt",
        "s/b/4",
        "s/ba/5",
        "s/c",
        "s/x.txt",
    ]
    assert await _keys(store, "s/a", delimiter=None) == ["s/a/1", "s/a/2", "s/a/deep/3"]
    page = await store.list("", delimiter=None)
    assert len(page.objects) == 9
    assert page.prefixes == ()


@pytest.mark.parametrize("delimiter", ["/", None])
async def test_list_in_small_pages(backend: Backend, delimiter: str | None) -> None:
    store = backend.store
    await _tree(store)
    whole = await store.list("s/", delimiter=delimiter)
    expected = sorted([o.key for o in whole.objects] + list(whole.prefixes))
    seen: list[str] = []
    token = None
    pages = 0
    while True:
        page = await store.list("s/", delimiter=delimiter, token=token, limit=2)
        assert len(page.objects) + len(page.prefixes) <= 2
        seen += [o.key for o in page.objects] + list(page.prefixes)
        pages += 1
        token = page.next_token
        if token is None:
            break
        assert pages < 20
    assert sorted(seen) == expected
    assert len(seen) == len(expected)  # nothing listed twice
    assert pages >= len(expected) // 2


async def test_list_pages_through_more_than_1000_keys(backend: Backend) -> None:
    store = backend.store
    keys = [f"many/{i:05d}" for i in range(1050)]
    semaphore = asyncio.Semaphore(32)

    async def put(key: str) -> None:
        async with semaphore:
            await store.put(key, b"x")

    await asyncio.gather(*(put(key) for key in keys))
    first = await store.list("many/", delimiter=None)
    assert len(first.objects) == 1000
    assert first.next_token is not None
    assert await _keys(store, "many/", delimiter=None) == keys
    assert await _keys(store, "many/") == keys


async def test_dir_markers_are_not_listed(backend: Backend) -> None:
    """KubeRay's S3/GCS/Azure writers create zero-byte ``dir/`` objects; listings skip
    them (a local directory cannot hold one: its put is refused)."""
    store = backend.store
    if backend.name == "local":
        with pytest.raises(StorageError):
            await store.put("session/", b"")
        return
    for marker in ("session/", "session/node/", "session/node/logs/"):
        await store.put(marker, b"")
    await store.put("session/node/logs/raylet.out", b"log")
    top = await store.list("session/")
    assert top.objects == ()
    assert top.prefixes == ("session/node/",)
    assert (await store.list("session/node/logs/")).objects[0].key == (
        "session/node/logs/raylet.out"
    )
    assert await _keys(store, "session/", delimiter=None) == ["session/node/logs/raylet.out"]


async def test_exists_is_true_for_objects_only(backend: Backend) -> None:
    store = backend.store
    await store.put("e/dir/file", b"1")
    assert await store.exists("e/dir/file")
    assert not await store.exists("e/dir")
    assert not await store.exists("e/dir/fil")
    assert not await store.exists("e/missing")


async def test_delete(backend: Backend) -> None:
    store = backend.store
    await store.put("d/one", b"1")
    await store.put("d/sub/two", b"2")
    await store.delete("d/one")
    await store.delete("d/one")  # a missing key is not an error
    await store.delete("never/was")
    assert not await store.exists("d/one")
    with pytest.raises(NotFound):
        await store.get("d/one")
    await store.delete("d/sub/two")
    assert await store.list("d/") == ListResult()
    assert await store.list("") == ListResult()


SPECIAL_KEYS = (
    "fetched_endpoints/restful__api__v0__placement_groups?detail=1&limit=10000",
    "fetched_endpoints/restful__api__v0__tasks?detail=1&limit=1&filter_keys=task_id",
    "logs/with space/and=equals & amp.log",
    "logs/percent%20plus+hash#semi;colon,comma",
    "logs/ünïcødé-日本.txt",
)


async def test_keys_with_query_strings_and_special_characters(backend: Backend) -> None:
    store = backend.store
    for key in SPECIAL_KEYS:
        await store.put(key, key.encode())
    for key in SPECIAL_KEYS:
        assert await store.get(key) == key.encode()
        assert await store.exists(key)
    assert await _keys(store, "", delimiter=None) == sorted(SPECIAL_KEYS)
    endpoints = await store.list("fetched_endpoints/")
    assert [o.key for o in endpoints.objects] == sorted(SPECIAL_KEYS[:2])
    logs = await store.list("logs/")
    assert logs.prefixes == ("logs/with space/",)
    for key in SPECIAL_KEYS:
        await store.delete(key)
        assert not await store.exists(key)


async def test_concurrent_puts(backend: Backend) -> None:
    store = backend.store
    await asyncio.gather(*(store.put(f"c/{i:03d}", f"value {i}".encode()) for i in range(40)))
    versions = [f"version {i} ".encode() * 50 for i in range(8)]
    await asyncio.gather(*(store.put("c/same", data) for data in versions))
    assert await store.get("c/same") in versions  # one whole version, never a mix
    values = await asyncio.gather(*(store.get(f"c/{i:03d}") for i in range(40)))
    assert values == [f"value {i}".encode() for i in range(40)]
    assert len(await _keys(store, "c/")) == 41


async def test_root_dir_prefixes_every_key(backend: Backend) -> None:
    """``STORAGE_ROOT_DIR`` joins like KubeRay's ``path.Join``: the key ``a/b`` of a store
    rooted at ``<root>/x//y/`` is ``<root>/x/y/a/b`` in the bucket."""
    nested = await backend.open(f"{backend.root}/x//y/")
    await nested.put("a/b", b"ab")
    assert await backend.store.get("x/y/a/b") == b"ab"
    assert await _keys(backend.store, "", delimiter=None) == ["x/y/a/b"]
    assert (await nested.list("a/")).objects[0].key == "a/b"
    assert (await nested.list("")).prefixes == ("a/",)
