"""Progress of waits: a live line on a terminal, plain lines otherwise."""

from __future__ import annotations

import io

from kuberay.kubectl_ray.context import Env
from kuberay.kubectl_ray.progress import CLEAR_LINE, wanted_pods
from kuberay.kubectl_ray.waiting import poll


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def probe_sequence(texts: list[str]):  # type: ignore[no-untyped-def]
    steps = iter(texts)

    async def probe() -> tuple[bool | None, str]:
        text = next(steps)
        return (True, "") if text == "done" else (None, text)

    return probe


STEPS = ["pods ready 0/3", "pods ready 0/3", "pods ready 2/3", "pods ready 3/3", "done"]


async def test_terminal_gets_one_live_line() -> None:
    err = Terminal()
    env = Env(stdout=io.StringIO(), stderr=err)
    assert await poll(env, probe_sequence(STEPS), timeout=30, interval=0, what="x") is True
    text = err.getvalue()
    assert text == (
        f"{CLEAR_LINE}pods ready 0/3{CLEAR_LINE}pods ready 2/3{CLEAR_LINE}pods ready 3/3\n"
    )


async def test_pipe_gets_plain_lines() -> None:
    err = io.StringIO()
    env = Env(stdout=io.StringIO(), stderr=err)
    await poll(env, probe_sequence(STEPS), timeout=30, interval=0, what="x")
    assert err.getvalue() == "pods ready 0/3\npods ready 2/3\npods ready 3/3\n"
    assert "\r" not in err.getvalue()


def test_wanted_pods_counts_head_replicas_and_hosts() -> None:
    spec = {"workerGroupSpecs": [{"replicas": 2, "numOfHosts": 2}, {"replicas": 3},
                                 {"replicas": 5, "suspend": True}]}  # fmt: skip
    assert wanted_pods({"spec": spec}) == 1 + 4 + 3
