"""What ``kuberay-history-server`` shows of a real RayJob whose cluster is gone: the Ray
dashboard API answers and Ray's own UI in headless Chromium
(``test_history_collector_real.py`` runs the job; this module reads it back).

The job's driver (``JOB_CODE`` there) runs ``parent`` (which starts ten nested ``square``
tasks), a ``Counter`` actor with three calls and a placement group ``history-e2e-pg`` with one
task in it; these are what a user opening the dead cluster looks for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import aiohttp

from tests.chromium import Browser, artifacts_dir
from tests.e2e.realcluster import wait_for

PG_NAME = "history-e2e-pg"


def _data(body: Any) -> Any:
    """The payload of a dashboard answer (``{result, msg, data}``), or the body itself."""
    if isinstance(body, dict) and "data" in body and "result" in body:
        return body["data"]
    return body


async def _get(http: aiohttp.ClientSession, url: str) -> Any:
    async with http.get(url, timeout=aiohttp.ClientTimeout(total=60)) as resp:
        text = await resp.text()
        assert resp.status == 200, f"GET {url}: {resp.status} {text[:500]}"
        return await resp.json(content_type=None)


async def check_api(
    url: str, namespace: str, owner: str, cluster: str, session: str, job_id: str
) -> None:
    """The server lists the session under its RayJob and answers the dashboard API for it:
    the job SUCCEEDED, its tasks FINISHED with their names, the actor, the placement group
    and the driver's log."""
    jar = aiohttp.CookieJar(unsafe=True)  # cookies for an IP host
    async with aiohttp.ClientSession(cookie_jar=jar, trust_env=False) as http:
        listed = await _get(http, f"{url}/clusters")
        mine = [c for c in listed if c["namespace"] == namespace and c["name"] == cluster]
        assert [(c["sessionName"], c["ownerKind"], c["ownerName"]) for c in mine] == [
            (session, "rayjob", owner)
        ], listed
        entered = await _get(http, f"{url}/enter_cluster/{namespace}/rayjob/{owner}/{session}")
        assert entered["session"] == session and entered["name"] == cluster, entered

        jobs = await _get(http, f"{url}/api/jobs/")
        (job,) = [j for j in jobs if j.get("submission_id") == job_id]
        assert job["status"] == "SUCCEEDED", job
        assert job["entrypoint"] == "python /home/ray/samples/job.py", job

        tasks = _data(await _get(http, f"{url}/api/v0/tasks?detail=1&limit=10000"))["result"]
        rows = tasks["result"]
        by_name: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            by_name.setdefault(str(row.get("func_or_class_name") or row.get("name")), []).append(
                row
            )
        squares = [r for r in by_name.get("square", []) if r["job_id"] == job["job_id"]]
        assert len(squares) == 11, sorted(by_name)  # ten nested, one in the placement group
        assert {r["state"] for r in squares} == {"FINISHED"}, squares
        (parent,) = by_name["parent"]
        assert parent["state"] == "FINISHED", parent
        nested = [r for r in squares if r.get("parent_task_id") == parent["task_id"]]
        assert len(nested) == 10, squares
        calls = [r for r in rows if str(r.get("name", "")).endswith("Counter.add")]
        assert len(calls) == 3 and {r["type"] for r in calls} == {"ACTOR_TASK"}, calls

        actors = _data(await _get(http, f"{url}/logical/actors"))["actors"]
        counters = [a for a in actors.values() if a.get("className") == "Counter"]
        assert len(counters) == 1, actors

        groups = _data(await _get(http, f"{url}/api/v0/placement_groups?detail=1"))["result"]
        assert [g["name"] for g in groups["result"]].count(PG_NAME) == 1, groups

        node = job.get("driver_node_id")
        assert node, job
        async with http.get(
            f"{url}/api/v0/logs/file",
            params={"node_id": node, "filename": f"job-driver-{job_id}.log"},
        ) as resp:
            log = await resp.text()
            assert resp.status == 200, log[:500]
        assert "history-e2e sum 285" in log and "history-e2e done" in log, log[-1000:]


async def check_ui(
    url: str, namespace: str, owner: str, session: str, job_id: str, workdir: Path
) -> list[Path]:
    """Ray's dashboard UI, served by the history server, in headless Chromium: the job page
    shows the job SUCCEEDED with its driver's output, and its task table the tasks by name;
    the actors page the actor. Returns the screenshots kept."""
    shots = artifacts_dir()
    kept: list[Path] = []
    async with Browser.start(workdir) as browser:
        await browser.goto(f"{url}/enter_cluster/{namespace}/rayjob/{owner}/{session}")
        await browser.wait_for_text([session], timeout=30)

        await browser.goto(f"{url}/#/jobs/{job_id}")
        await browser.wait_for_text(
            [job_id, "SUCCEEDED", "Task Table", "history-e2e sum 285"], timeout=90
        )

        async def opened() -> bool:
            await browser.click_text("Task Table")
            text = await browser.text()
            return "parent" in text and "square" in text and "FINISHED" in text

        await wait_for("the task table", opened, 60, browser.text)
        path = shots / f"history-e2e-job-{job_id}.png"
        path.write_bytes(await browser.screenshot())
        kept.append(path)

        await browser.goto(f"{url}/#/actors")
        await browser.wait_for_text(["Counter"], timeout=60)
        path = shots / f"history-e2e-actors-{job_id}.png"
        path.write_bytes(await browser.screenshot())
        kept.append(path)
    errors = [c for c in browser.console if c.startswith("exception")]
    assert not errors, errors
    return kept
