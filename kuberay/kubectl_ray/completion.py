"""Shell completion, in cobra's protocol (the one kubectl's own completion speaks to
plugins).

``kubectl-ray __complete WORD... PARTIAL`` prints one candidate a line, then
``:<directive>`` (4: no file completion; 0: let the shell complete files). kubectl's
completion runs ``kubectl_complete-ray WORD... PARTIAL`` for ``kubectl ray <TAB>``: that
executable is :func:`complete_main`. ``kubectl ray completion bash|zsh|fish`` prints a
script for completing ``kubectl-ray`` itself.

Candidates: subcommands (and aliases), flags of the command reached, flag values with a
fixed set (``-o``, ``--node-type``...), contexts/clusters/users from the kubeconfig,
namespaces and Ray resource names from the cluster (``TYPE/NAME`` forms too), using the
connection flags already typed.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import sys
from typing import Any, TextIO

from kuberay.kube import objects as k8s
from kuberay.kubectl_ray.completion_scripts import SCRIPTS

NO_FILE, FILES = 4, 0
#: command path -> the Ray kind its positional names.
POSITIONAL_KIND = {
    "get cluster": "RayCluster",
    "get token": "RayCluster",
    "get job": "RayJob",
    "get service": "RayService",
    "get cronjob": "RayCronJob",
    "scale cluster": "RayCluster",
    "delete": "RayCluster",
    "log": "RayCluster",
    "session": "RayCluster",
    "why": "RayCluster",
}
#: commands whose positional takes ``TYPE/NAME``.
TYPED = {"delete", "log", "session", "why"}
TYPE_PREFIXES = {"raycluster": "RayCluster", "rayjob": "RayJob", "rayservice": "RayService"}
FLAG_KIND = {"--ray-cluster": "RayCluster"}
FILE_FLAGS = {
    "--kubeconfig", "--certificate-authority", "--client-certificate", "--client-key",
    "--file", "--filename", "--out-dir", "--working-dir", "--runtime-env",
}  # fmt: skip


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add ``completion SHELL``."""
    p = sub.add_parser(
        "completion",
        help="Print a shell completion script (bash, zsh or fish).",
        parents=[common],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n"
        "  source <(kubectl ray completion bash)     # completes kubectl-ray\n"
        '  kubectl ray completion zsh > "${fpath[1]}/_kubectl-ray"\n'
        "  kubectl ray completion fish | source\n"
        "`kubectl ray <TAB>` works through kubectl's own completion once the\n"
        "kubectl_complete-ray executable is on PATH (installed with the plugin).",
    )
    p.add_argument("shell", choices=sorted(SCRIPTS), help="the shell")
    p.set_defaults(handler=print_script)


async def print_script(env: Any, args: argparse.Namespace) -> None:
    """``completion SHELL``: the script on stdout."""
    env.stdout.write(SCRIPTS[args.shell])


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[Any] | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def _option(parser: argparse.ArgumentParser, word: str) -> argparse.Action | None:
    name = word.split("=", 1)[0]
    return parser._option_string_actions.get(name)


def _takes_value(action: argparse.Action) -> bool:
    return action.nargs != 0 and not isinstance(
        action, argparse._StoreTrueAction | argparse._StoreFalseAction | argparse._HelpAction
    )


class Walk:
    """Where the typed words lead: the parser reached, its command path, positionals
    given, the connection flags seen, and the option waiting for a value."""

    def __init__(self, root: argparse.ArgumentParser, words: list[str]) -> None:
        self.parser = root
        self.path: list[str] = []
        self.positionals: list[str] = []
        self.flags: list[str] = []
        self.pending: argparse.Action | None = None
        self.pending_word = ""
        for word in words:
            if self.pending is not None:
                self.flags += [self.pending_word, word]
                self.pending = None
                continue
            if word.startswith("-") and word != "-":
                action = _option(self.parser, word)
                if action is not None and _takes_value(action) and "=" not in word:
                    self.pending, self.pending_word = action, word.split("=", 1)[0]
                elif action is not None:
                    self.flags.append(word)
                continue
            sub = _subparsers(self.parser)
            if sub is not None and word in sub.choices and not self.positionals:
                self.parser = sub.choices[word]
                self.path.append(self.parser.prog.split()[-1])
                continue
            self.positionals.append(word)

    @property
    def command(self) -> str:
        """The canonical command path (``get cluster``)."""
        return " ".join(self.path)


def _connection(flags: list[str]) -> Any:
    from kuberay.kubectl_ray.main import build_parser, connection_flags

    args, _ = build_parser().parse_known_args([*flags, "version"])
    return connection_flags(args)


async def _names(flags: list[str], kind: str, all_namespaces: bool = False) -> list[str]:
    """Names of ``kind`` (a Ray kind or Namespace) from the cluster; none on any error."""
    from kuberay.api.v1.constants import API_VERSION
    from kuberay.kubectl_ray.context import Env, context_namespace

    try:
        conn = _connection(flags)
    except SystemExit:
        return []
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), flags=conn)
    try:
        client = await env.client()
        if kind == "Namespace":
            items, _ = await client.list_all("v1", "Namespace", metadata_only=True)
        else:
            ns = None if all_namespaces else context_namespace(conn)
            items, _ = await client.list_all(API_VERSION, kind, ns, metadata_only=True)
        return sorted(str(i["metadata"]["name"]) for i in items)
    except Exception:  # completion never fails loudly
        return []
    finally:
        await env.close()


def _kubeconfig_names(flags: list[str], section: str) -> list[str]:
    from kuberay.kubectl_ray.connection import load

    try:
        merged = load(_connection(flags))
    except Exception:
        return []
    return sorted(getattr(merged, section))


async def candidates(root: argparse.ArgumentParser, words: list[str]) -> tuple[list[str], int]:
    """Completions of the last word of ``words`` (``""``: a new word) and the directive."""
    typed, partial = words[:-1], words[-1] if words else ""
    walk = Walk(root, typed)
    action = walk.pending
    if action is not None:
        return await _values(walk, action, partial)
    if partial.startswith("-"):
        if "=" in partial:
            opt = _option(walk.parser, partial)
            if opt is not None and _takes_value(opt):
                name = partial.split("=", 1)[0]
                values, directive = await _values(walk, opt, partial.split("=", 1)[1])
                return [f"{name}={v}" for v in values], directive
        options = sorted(
            {s for a in walk.parser._actions for s in a.option_strings if s.startswith("--")}
            | {s for a in walk.parser._actions for s in a.option_strings if len(s) == 2}
        )
        return [o for o in options if o.startswith(partial)], NO_FILE
    sub = _subparsers(walk.parser)
    if sub is not None and not walk.positionals:
        names = sorted(n for n in sub.choices if not n.startswith("_"))
        return [n for n in names if n.startswith(partial)], NO_FILE
    fixed = [a for a in walk.parser._actions if not a.option_strings and a.choices is not None]
    fixed = [a for a in fixed if not isinstance(a, argparse._SubParsersAction)]
    if len(fixed) > len(walk.positionals):
        choices = fixed[len(walk.positionals)].choices or []
        return [str(c) for c in choices if str(c).startswith(partial)], NO_FILE
    kind = POSITIONAL_KIND.get(walk.command)
    if kind is None:
        if walk.command == "get workergroup":
            return await _groups(walk, partial), NO_FILE
        return [], NO_FILE
    all_ns = "-A" in walk.flags or "--all-namespaces" in walk.flags
    if walk.command in TYPED and "/" in partial:
        prefix = partial.split("/", 1)[0]
        typed_kind = TYPE_PREFIXES.get(prefix.lower())
        if typed_kind is None:
            return [], NO_FILE
        names = await _names(walk.flags, typed_kind)
        return [f"{prefix}/{n}" for n in names if f"{prefix}/{n}".startswith(partial)], NO_FILE
    if walk.command in TYPED and walk.positionals and walk.command != "delete":
        return [], NO_FILE
    names = await _names(walk.flags, kind, all_ns)
    found = [n for n in names if n.startswith(partial) and n not in walk.positionals]
    if walk.command in TYPED:
        found += [f"{p}/" for p in TYPE_PREFIXES if p.startswith(partial)]
    no_space = bool(found) and all(n.endswith("/") for n in found)
    return found, NO_FILE | (2 if no_space else 0)


async def _groups(walk: Walk, partial: str) -> list[str]:
    names: list[str] = []
    from kuberay.api.v1.constants import API_VERSION, KIND_RAYCLUSTER
    from kuberay.kubectl_ray.context import Env, context_namespace

    try:
        conn = _connection(walk.flags)
        env = Env(stdout=io.StringIO(), stderr=io.StringIO(), flags=conn)
        try:
            client = await env.client()
            items, _ = await client.list_all(API_VERSION, KIND_RAYCLUSTER, context_namespace(conn))
        finally:
            await env.close()
    except Exception:
        return []
    for item in items:
        for group in k8s.spec(item).get("workerGroupSpecs") or []:
            names.append(str(group.get("groupName")))
    return sorted({n for n in names if n.startswith(partial)})


async def _values(walk: Walk, action: argparse.Action, partial: str) -> tuple[list[str], int]:
    strings = set(action.option_strings)
    if action.choices is not None:
        return [str(c) for c in action.choices if str(c).startswith(partial)], NO_FILE
    if strings & FILE_FLAGS:
        return [], FILES
    if strings & {"-n", "--namespace"}:
        names = await _names(walk.flags, "Namespace")
    elif "--context" in strings:
        names = _kubeconfig_names(walk.flags, "contexts")
    elif "--cluster" in strings:
        names = _kubeconfig_names(walk.flags, "clusters")
    elif "--user" in strings:
        names = _kubeconfig_names(walk.flags, "users")
    elif strings & set(FLAG_KIND) or "-c" in strings:
        names = await _names(walk.flags, "RayCluster")
    else:
        return [], NO_FILE
    return [n for n in names if n.startswith(partial)], NO_FILE


async def complete(words: list[str], stdout: TextIO) -> int:
    """Print the completions of ``words`` in cobra's format; exit code 0."""
    from kuberay.kubectl_ray.main import build_parser, command_of

    words = words or [""]
    found, directive = await candidates(build_parser(command_of(words[:-1])), words)
    for name in found:
        stdout.write(name + "\n")
    stdout.write(f":{directive}\n")
    stdout.flush()
    return 0


def complete_main(argv: list[str] | None = None) -> int:
    """The ``kubectl_complete-ray`` executable kubectl's completion runs."""
    words = sys.argv[1:] if argv is None else argv
    return asyncio.run(complete(list(words), sys.stdout))


__all__ = ["Walk", "candidates", "complete", "complete_main", "register"]
