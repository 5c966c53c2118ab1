"""The cluster picker (``/select_cluster``) in a real browser (headless Chromium): its Reload
button (KubeRay v1.8) shows a session stored after the page was opened, and choosing a
RayService's cluster enters it by the cluster's own name, as KubeRay's picker does.

The store holds KubeRay-layout sessions of a RayJob's cluster and, added later, a
RayService's; the server's cluster list is cached for an hour, so only the Reload button
(``/clusters?reload=true``) can show the second. The server has no dashboard UI build, so a
successful enter ends on the page saying so, with the session's cookies set.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestServer

from kuberay.historyserver.server.app import make_app
from tests.chromium import Browser, require_chromium
from tests.unit.historyserver.server.stores import all_events, kuberay_layout_store


@pytest.fixture
async def picker() -> AsyncIterator[tuple[str, Any]]:
    store, _ = kuberay_layout_store(all_events())
    server = TestServer(make_app(store, cluster_list_ttl=3600.0), host="127.0.0.1")
    await server.start_server()
    try:
        yield str(server.make_url("")).rstrip("/"), store
    finally:
        await server.close()


async def test_reload_shows_a_new_session_and_a_row_enters_its_cluster(
    picker: tuple[str, Any], tmp_path: Path
) -> None:
    require_chromium()
    url, store = picker
    async with Browser.start(tmp_path) as browser:
        await browser.goto(f"{url}/select_cluster")
        await browser.wait_for_text(["my-job-raycluster-x", "rayjob/my-job"], timeout=20)

        kuberay_layout_store(
            all_events(), owner=("rayservice", "my-svc"), cluster="my-svc-rc-y", store=store
        )
        assert await browser.click_text("Reload") == 1
        await browser.wait_for_text(["my-svc-rc-y", "rayservice/my-svc"], timeout=20)

        assert await browser.click_text("my-svc-rc-y") == 1
        await browser.wait_for_text(["No Ray dashboard UI build is available"], timeout=20)
        cookies = str(await browser.evaluate("document.cookie"))
        for pair in ("cluster_name=my-svc-rc-y", "owner_kind=rayservice", "owner_name=my-svc"):
            assert pair in cookies, cookies
    assert not [c for c in browser.console if c.startswith("exception")], browser.console
