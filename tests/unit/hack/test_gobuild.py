"""hack/build/gobuild.py, the Go builds' shared skeleton: what a ``go install`` leaves behind."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from hack.build import gobuild

FAKE_GO = """#!/bin/sh
# a stand-in for go: 'go install ... pkg/cmd/NAME@v' writes $GOBIN/NAME; FAIL=1 fails
[ -n "$FAIL" ] && { echo "go: module not found" >&2; exit 1; }
mkdir -p "$GOBIN"
for arg in "$@"; do
  case "$arg" in
    *@*) name="${arg%@*}"; name="${name##*/}"; echo "$CGO_ENABLED" > "$GOBIN/$name";;
  esac
done
"""


class Failed(Exception):
    pass


def _fake_go(tmp_path: Path) -> str:
    go = tmp_path / "go"
    go.write_text(FAKE_GO)
    go.chmod(go.stat().st_mode | stat.S_IEXEC)
    return str(go)


def test_go_install_moves_each_binary_into_the_cache_and_records_the_build(
    tmp_path: Path,
) -> None:
    dest = tmp_path / "cache" / "tool-v1"
    outputs = {"a": dest / "a", "b": dest / "b"}
    gobuild.go_install(
        ["example.com/m/cmd/a@v1", "example.com/m/cmd/b@v1"],
        outputs,
        Failed,
        go=_fake_go(tmp_path),
    )
    assert outputs["a"].read_text() == "0\n"  # statically linked: CGO_ENABLED=0
    assert outputs["b"].is_file()
    assert gobuild.recorded_build_seconds(dest) is not None
    assert not (dest / ".gobin.tmp").exists()


def test_go_install_failure_names_the_target_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAIL", "1")
    dest = tmp_path / "cache" / "tool-v1"
    with pytest.raises(Failed, match=r"go install example.com/m/cmd/a@v1 failed: go: module"):
        gobuild.go_install(
            ["example.com/m/cmd/a@v1"], {"a": dest / "a"}, Failed, go=_fake_go(tmp_path)
        )
    assert not (dest / "a").exists()
    assert not (dest / ".gobin.tmp").exists()


def test_build_once_builds_only_what_is_missing(tmp_path: Path) -> None:
    out = tmp_path / "bin"
    calls: list[int] = []

    def build() -> None:
        calls.append(1)
        out.write_text("x")

    gobuild.build_once(out.exists, tmp_path, build)
    gobuild.build_once(out.exists, tmp_path, build)
    assert calls == [1]
