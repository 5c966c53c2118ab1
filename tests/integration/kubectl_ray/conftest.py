"""Fixtures: run ``kubectl ray`` in-process against the real apiserver; a namespace
with CRDs installed; the operator (when a command needs it)."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path

import attrs
import pytest

from kuberay.kube import Client
from kuberay.kubectl_ray import run
from tests.integration.raycluster.conftest import (
    Operator,
    start_operator,
)


@attrs.frozen
class Result:
    """Exit code and output of one CLI run."""

    code: int
    out: str
    err: str


@attrs.define
class Cli:
    """Runs ``kubectl ray`` with the test kubeconfig in the test namespace."""

    kubeconfig: Path
    namespace: str

    async def __call__(self, *argv: str, stdin: str = "", namespace: bool = True) -> Result:
        out, err = io.StringIO(), io.StringIO()
        args = ["--kubeconfig", str(self.kubeconfig)]
        if namespace:
            args += ["-n", self.namespace]
        code = await run([*args, *argv], stdout=out, stderr=err, stdin=io.StringIO(stdin))
        return Result(code, out.getvalue(), err.getvalue())


@pytest.fixture
async def cli(kubeconfig_path: Path, namespace: str, crds_installed: None) -> Cli:
    return Cli(kubeconfig_path, namespace)


@pytest.fixture
async def operator(
    crds_installed: None,
    kclient: Client,
    namespace: str,
) -> AsyncIterator[Operator]:
    async with start_operator(kclient, namespace) as op:
        yield op
