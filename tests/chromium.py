"""Headless Chromium (Debian's ``chromium``) driven over the DevTools protocol, for tests that
check what a person sees in a browser.

No browser-automation package is needed: Chromium is started with
``--remote-debugging-port=0``, the DevTools websocket it prints is opened with aiohttp, and
the few commands a test needs are sent as JSON (``Page.navigate``, ``Runtime.evaluate``,
``Page.captureScreenshot``).

**Nothing leaves this machine.** Every host name resolves to nothing except ``127.0.0.1``
and ``localhost`` (``--host-resolver-rules``), every request that is not to loopback goes to a
proxy on ``127.0.0.1:9`` that refuses it, and Chromium's own background traffic (component
updates, safe browsing, metrics, sync, translate) is switched off.

Usage::

    async with Browser.start(tmp_path) as browser:
        await browser.goto("http://127.0.0.1:8080/")
        text = await browser.wait_for_text(["SUCCEEDED"], timeout=30)
        png = await browser.screenshot()

``chromium_binary()`` is ``None`` when the package is not installed (``make test`` installs
it: ``hack/node_deps.py --browser``); ``require_chromium()`` skips (or, under
``KUBERAY_REQUIRE_BROWSER=1``, fails) a test then.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import re
import shutil
import signal
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import aiohttp

CANDIDATES = ("chromium", "chromium-browser", "google-chrome")
#: set (``make test`` does) to fail instead of skip when Chromium is missing
REQUIRE_ENV = "KUBERAY_REQUIRE_BROWSER"
REPO = Path(__file__).resolve().parents[1]
_DEVTOOLS = re.compile(r"DevTools listening on (ws://127\.0\.0\.1:\d+/devtools/browser/\S+)")

#: loopback only: names resolve to nothing else, and other traffic goes to a dead local proxy
NETWORK_GUARD = (
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
    "--proxy-server=http://127.0.0.1:9",
    "--proxy-bypass-list=127.0.0.1;localhost",
)
QUIET = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--disable-features=Translate,OptimizationHints,MediaRouter,AutofillServerCommunication",
    "--metrics-recording-only",
    "--no-first-run",
    "--no-default-browser-check",
    "--no-pings",
)


def chromium_binary() -> str | None:
    """The first Chromium on ``PATH`` (``$KUBERAY_CHROMIUM`` wins), else ``None``."""
    explicit = os.environ.get("KUBERAY_CHROMIUM")
    if explicit:
        return explicit
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def require_chromium() -> str:
    """Chromium's path; when it is missing, skip the test, or fail it under
    ``KUBERAY_REQUIRE_BROWSER=1``."""
    import pytest

    binary = chromium_binary()
    if binary is None:
        why = "no chromium on PATH (make test installs Debian's: hack/node_deps.py --browser)"
        if os.environ.get(REQUIRE_ENV):
            pytest.fail(why)
        pytest.skip(why)
    return binary


def artifacts_dir() -> Path:
    """Where tests keep what a person should be able to look at afterwards (screenshots):
    ``$KUBERAY_TEST_ARTIFACTS``, else ``.run/test-artifacts`` in the checkout (created)."""
    path = Path(os.environ.get("KUBERAY_TEST_ARTIFACTS") or REPO / ".run" / "test-artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


class BrowserError(RuntimeError):
    """Chromium did not start, a DevTools command failed, or a wait timed out."""


class Browser:
    """One headless Chromium with one page. Use :meth:`start` as an async context manager."""

    def __init__(
        self, proc: asyncio.subprocess.Process, http: aiohttp.ClientSession, page_ws: str
    ) -> None:
        self._proc = proc
        self._http = http
        self._page_ws = page_ws
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._next_id = 0
        self.console: list[str] = []  # console messages and uncaught exceptions, in order

    @classmethod
    @contextlib.asynccontextmanager
    async def start(
        cls, workdir: Path, *, width: int = 1400, height: int = 1000, timeout: float = 60
    ) -> AsyncIterator[Browser]:
        """Start Chromium with a fresh profile under ``workdir`` and yield the driver; the
        browser is killed on exit."""
        binary = chromium_binary()
        if binary is None:
            raise BrowserError("no chromium on PATH (apt-get install chromium)")
        profile = workdir / "chromium-profile"
        profile.mkdir(parents=True, exist_ok=True)
        args = [
            binary,
            "--headless=new",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            f"--user-data-dir={profile}",
            f"--window-size={width},{height}",
            "--remote-debugging-address=127.0.0.1",
            "--remote-debugging-port=0",
            *NETWORK_GUARD,
            *QUIET,
        ]
        if os.geteuid() == 0:
            args.append("--no-sandbox")  # Chromium refuses to run its sandbox as root
        args.append("about:blank")
        proc = await asyncio.create_subprocess_exec(
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        http = aiohttp.ClientSession(trust_env=False)
        browser: Browser | None = None
        try:
            browser_ws = await _devtools_url(proc, timeout)
            base = browser_ws.split("/devtools/", 1)[0].replace("ws://", "http://")
            page_ws = await _page_websocket(http, base, timeout)
            browser = cls(proc, http, page_ws)
            await browser._connect()
            yield browser
        finally:
            if browser is not None and browser._ws is not None:
                await browser._ws.close()
            await http.close()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()

    async def _connect(self) -> None:
        self._ws = await self._http.ws_connect(self._page_ws, max_msg_size=64 << 20)
        for method in ("Page.enable", "Runtime.enable"):
            await self.send(method)

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one DevTools command and return its ``result``; events read meanwhile are
        kept in :attr:`console` when they are console output or exceptions."""
        assert self._ws is not None
        self._next_id += 1
        ident = self._next_id
        await self._ws.send_str(json.dumps({"id": ident, "method": method, "params": params or {}}))
        while True:
            msg = await asyncio.wait_for(self._ws.receive(), 60)
            if msg.type != aiohttp.WSMsgType.TEXT:
                raise BrowserError(f"DevTools connection ended ({msg.type!r}) during {method}")
            data = json.loads(msg.data)
            if data.get("id") == ident:
                if "error" in data:
                    raise BrowserError(f"{method}: {data['error']}")
                return dict(data.get("result") or {})
            self._keep_event(data)

    def _keep_event(self, data: dict[str, Any]) -> None:
        method = data.get("method")
        params = data.get("params") or {}
        if method == "Runtime.consoleAPICalled":
            text = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
            self.console.append(f"console.{params.get('type')}: {text}")
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails") or {}
            exc = details.get("exception") or {}
            self.console.append(f"exception: {exc.get('description') or details.get('text')}")

    async def goto(self, url: str) -> None:
        """Navigate the page to ``url`` (returns once navigation starts; wait on content)."""
        result = await self.send("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise BrowserError(f"navigating to {url}: {result['errorText']}")

    async def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (awaits promises)."""
        result = await self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression!r}: {result['exceptionDetails']}")
        return (result.get("result") or {}).get("value")

    async def text(self) -> str:
        """The page's visible text (``document.body.innerText``)."""
        return str(await self.evaluate("document.body ? document.body.innerText : ''") or "")

    async def wait_for_text(self, wanted: Sequence[str], *, timeout: float) -> str:
        """Poll the page's text until it contains every string of ``wanted``; the text.
        ``BrowserError`` naming what is missing (and the console) after ``timeout``."""
        deadline = time.monotonic() + timeout
        text = ""
        while True:
            text = await self.text()
            missing = [w for w in wanted if w not in text]
            if not missing:
                return text
            if time.monotonic() > deadline:
                raise BrowserError(
                    f"page text lacks {missing} after {timeout:.0f}s; url "
                    f"{await self.evaluate('location.href')}; text: {text[:1500]!r}; "
                    f"console: {self.console[-20:]}"
                )
            await asyncio.sleep(0.5)

    async def click_text(self, label: str) -> int:
        """Click every element whose own text is ``label`` (whitespace-normalised); how many
        were clicked (0: none found)."""
        xpath = f"//*[normalize-space(text())={json.dumps(label)}]"
        script = (
            f"(() => {{ const r = document.evaluate({json.dumps(xpath)}, document, null, "
            "XPathResult.ORDERED_NODE_SNAPSHOT_TYPE, null); "
            "for (let i = 0; i < r.snapshotLength; i++) r.snapshotItem(i).click(); "
            "return r.snapshotLength; })()"
        )
        return int(await self.evaluate(script) or 0)

    async def screenshot(self, *, full_page: bool = True) -> bytes:
        """The page as PNG bytes: the whole scrollable page (``full_page``), else the
        window."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = (await self.send("Page.getLayoutMetrics"))["cssContentSize"]
            params["captureBeyondViewport"] = True
            params["clip"] = {
                "x": 0,
                "y": 0,
                "width": size["width"],
                "height": min(size["height"], 16000),
                "scale": 1,
            }
        result = await self.send("Page.captureScreenshot", params)
        return base64.b64decode(result["data"])


async def _devtools_url(proc: asyncio.subprocess.Process, timeout: float) -> str:
    """The browser websocket Chromium prints on stderr once it listens."""
    assert proc.stderr is not None
    seen: list[str] = []

    async def read() -> str:
        assert proc.stderr is not None
        while True:
            line = await proc.stderr.readline()
            if not line:
                raise BrowserError(f"chromium exited ({proc.returncode}): {''.join(seen)[-2000:]}")
            text = line.decode(errors="replace")
            seen.append(text)
            found = _DEVTOOLS.search(text)
            if found:
                return found[1]

    try:
        url = await asyncio.wait_for(read(), timeout)
    except TimeoutError:
        raise BrowserError(f"chromium printed no DevTools URL in {timeout:.0f}s") from None
    asyncio.get_running_loop().create_task(_drain(proc))
    return url


async def _drain(proc: asyncio.subprocess.Process) -> None:
    """Keep reading Chromium's stderr so a full pipe never blocks it."""
    assert proc.stderr is not None
    while await proc.stderr.read(65536):
        pass


async def _page_websocket(http: aiohttp.ClientSession, base: str, timeout: float) -> str:
    """The websocket of Chromium's first page target."""
    deadline = time.monotonic() + timeout
    while True:
        async with http.get(f"{base}/json/list") as resp:
            targets = await resp.json(content_type=None)
        for target in targets:
            if target.get("type") == "page" and target.get("webSocketDebuggerUrl"):
                return str(target["webSocketDebuggerUrl"])
        if time.monotonic() > deadline:
            raise BrowserError(f"chromium has no page target: {targets}")
        await asyncio.sleep(0.2)
