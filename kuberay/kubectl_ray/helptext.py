"""``--help`` for every command: examples (an epilog per command path) and each flag's
default written into its help line (unless it already says one)."""

from __future__ import annotations

import argparse
from typing import Any

EXAMPLES: dict[str, str] = {
    "": """  kubectl ray get cluster                      # the RayClusters of the namespace
  kubectl ray create cluster demo --wait       # make one and wait for it
  kubectl ray why raycluster/demo              # why is it not ready?
  kubectl ray logs demo                        # download its logs
  kubectl ray session demo                     # dashboard on localhost:8265
  kubectl ray completion bash                  # shell completion""",
    "get": """  kubectl ray get cluster -A
  kubectl ray get job -o wide
  kubectl ray get nodes -c demo -o yaml""",
    "get cluster": """  kubectl ray get cluster
  kubectl ray get cluster demo -o yaml
  kubectl ray get clusters -A -o name""",
    "get workergroup": """  kubectl ray get workergroup -c demo
  kubectl ray get workergroup default-group -A""",
    "get node": """  kubectl ray get nodes
  kubectl ray get nodes -c demo -o json""",
    "get token": "  kubectl ray get token demo",
    "create": """  kubectl ray create cluster demo --worker-replicas 2 --wait
  kubectl ray create workergroup gpus -c demo --worker-gpu 1""",
    "create cluster": """  kubectl ray create cluster demo
  kubectl ray create cluster demo --worker-replicas 3 --worker-cpu 4 --wait --timeout 10m
  kubectl ray create cluster demo --file cluster-config.yaml --dry-run""",
    "create workergroup": "  kubectl ray create workergroup gpus -c demo --worker-gpu 1",
    "delete": """  kubectl ray delete demo
  kubectl ray delete rayjob/nightly rayservice/serve -y""",
    "scale": "  kubectl ray scale cluster demo -w default-group -r 3",
    "scale cluster": """  kubectl ray scale cluster demo -w default-group -r 3
  kubectl ray scale cluster demo -w default-group --min-replicas 1 --max-replicas 5""",
    "job": "  kubectl ray job submit --name demo-job --working-dir . -- python main.py",
    "job submit": """  kubectl ray job submit --name demo-job --working-dir . -- python main.py
  kubectl ray job submit -f rayjob.yaml --working-dir ./src --runtime-env env.yaml -- python x.py
  kubectl ray job submit --name quick --no-wait -- python -c 'import ray; ray.init()'""",
    "session": """  kubectl ray session demo
  kubectl ray session rayjob/nightly
  kubectl ray session rayservice/serve --dashboard-port 18265""",
    "history": "  kubectl ray history list -A",
    "history list": """  kubectl ray history list
  kubectl ray history list -A -o json""",
    "history open": """  kubectl ray history open demo
  kubectl ray history open nightly --kind rayjob --session SESSION""",
    "version": """  kubectl ray version
  kubectl ray version -o json""",
    "render": """  kubectl ray render -f raycluster.yaml
  kubectl ray render -f rayjob.yaml -o json --feature-gates RayJobDeletionPolicy=true""",
    "why": """  kubectl ray why demo
  kubectl ray why rayjob/nightly -v
  kubectl ray why rayservice/serve -o json && echo ready""",
}


def _shown(default: Any) -> bool:
    if default is None or default is argparse.SUPPRESS or default is False:
        return False
    return not (isinstance(default, str | list | dict | tuple) and not default)


def _text(default: Any) -> str:
    return str(default).replace("%", "%%")


def _path(parser: argparse.ArgumentParser) -> str:
    return " ".join(parser.prog.split()[2:])


CONNECTION_GROUP = "kubectl connection flags"


def _usage(parser: argparse.ArgumentParser) -> str:
    words = []
    for action in parser._actions:
        if action.option_strings:
            continue
        if isinstance(action, argparse._SubParsersAction):
            words.append("COMMAND")
            continue
        name = str(action.metavar or action.dest).upper()
        words.append(f"[{name}]" if action.nargs in ("?", "*") else name)
    return " ".join(["%(prog)s", *words, "[flags]"])


def decorate(parser: argparse.ArgumentParser, root: bool = True) -> None:
    """Add examples and defaults to ``parser`` and every parser under it; a short usage
    line; kubectl's connection flags listed in the root's help only."""
    path = _path(parser)
    if path in EXAMPLES and not parser.epilog:
        parser.epilog = "examples:\n" + EXAMPLES[path]
    parser.usage = _usage(parser)
    if not root:
        parser._action_groups = [g for g in parser._action_groups if g.title != CONNECTION_GROUP]
        note = "kubectl's connection flags (--context, --server, --as, ...): kubectl ray --help"
        parser.epilog = f"{parser.epilog}\n\n{note}" if parser.epilog else note
    if parser.epilog:
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
    for action in parser._actions:
        if action.option_strings and _shown(action.default) and action.help is not None:
            if "default" not in action.help.lower() and action.help is not argparse.SUPPRESS:
                action.help += f" (default: {_text(action.default)})"
        elif action.option_strings and _shown(action.default) and action.help is None:
            action.help = f"(default: {_text(action.default)})"
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for sub in action.choices.values():
                if id(sub) not in seen:
                    seen.add(id(sub))
                    decorate(sub, root=False)


__all__ = ["EXAMPLES", "decorate"]
