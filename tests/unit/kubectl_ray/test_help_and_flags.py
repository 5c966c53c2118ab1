"""``--help`` of every command (examples, defaults), kubectl's value forms of
``--request-timeout`` and Go's proxy-environment rules."""

from __future__ import annotations

import argparse
import io

import pytest

from kuberay.kubectl_ray import run
from kuberay.kubectl_ray.connection import parse_request_timeout, proxy_for
from kuberay.kubectl_ray.main import build_parser


def parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in {id(p): p for p in action.choices.values()}.values():
                found += parsers(sub)
    return found


def test_every_command_has_examples_and_shows_defaults() -> None:
    every = parsers(build_parser())
    assert len(every) > 25
    for parser in every:
        text = parser.format_help()
        assert "kubectl ray " in text.split("examples:\n", 1)[-1], parser.prog
        assert "examples:\n" in text, parser.prog
    create = " ".join(
        next(p for p in every if p.prog == "kubectl ray create cluster").format_help().split()
    )
    assert "(default: 1)" in create.split("--worker-replicas", 1)[1].split("--", 1)[0]
    assert "(default: rayproject/ray:" in create
    root = every[0].format_help()
    for flag in ("--server", "--token", "--as-group", "--request-timeout", "--tls-server-name"):
        assert flag in root


async def test_help_exits_zero_and_logs_is_log() -> None:
    out = io.StringIO()
    assert await run(["logs", "--help"], stdout=out) == 0
    args = build_parser().parse_args(["logs", "demo", "--follow"])
    assert args.follow and args.resource == "demo"
    assert build_parser().parse_args(["log", "demo"]).handler is args.handler


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("0", 0.0), ("5", 5.0), ("5s", 5.0), ("1m", 60.0), ("1h30m", 5400.0), ("250ms", 0.25)],
)
def test_request_timeout_values(text: str, seconds: float) -> None:
    assert parse_request_timeout(text) == seconds


@pytest.mark.parametrize("text", ["", "5x", "s", "1.5.3s", "-1s"])
def test_request_timeout_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="invalid timeout value"):
        parse_request_timeout(text)


def test_proxy_environment_rules() -> None:
    env = {"HTTPS_PROXY": "proxy.corp:3128", "NO_PROXY": ".internal,10.0.0.0/8,api.x:6443"}
    assert proxy_for("https://k8s.example.com", None, env) == "http://proxy.corp:3128"
    assert proxy_for("https://127.0.0.1:6443", None, env) is None
    assert proxy_for("https://localhost:6443", None, env) is None
    assert proxy_for("https://a.b.internal", None, env) is None
    assert proxy_for("https://10.2.3.4", None, env) is None
    assert proxy_for("https://api.x:6443", None, env) is None
    assert proxy_for("https://api.x:443", None, env) == "http://proxy.corp:3128"
    assert proxy_for("http://plain.example", None, env) is None  # HTTP_PROXY unset
    assert proxy_for("https://127.0.0.1", "http://p:1", env) == "http://p:1"  # proxy-url wins


def test_help_and_completion_start_without_operator_dependencies() -> None:
    import subprocess
    import sys

    probe = (
        "import sys, io\n"
        "from kuberay.kubectl_ray.main import main\n"
        "sys.stdout = io.StringIO()\n"
        "main(['--help']); main(['__complete', 'g']); main(['completion', 'bash'])\n"
        "heavy = [m for m in ('aiohttp', 'kuberay.kube.client', 'kuberay.kube.transport',"
        " 'kuberay.http', 'kuberay.controllers', 'structlog',"
        " 'prometheus_client', 'kubernetes_asyncio', 'orjson') if m in sys.modules]\n"
        "sys.__stdout__.write(repr(heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout == "[]"
