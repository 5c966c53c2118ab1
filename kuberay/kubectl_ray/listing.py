"""``kubectl ray get job|service|cronjob [NAME]``: the CRD's printer columns, as
``kubectl get`` shows them, plus a ``WHY`` column.

The apiserver renders the rows (a ``meta.k8s.io/v1 Table`` with the objects included), so
the columns are exactly the CRD's ``additionalPrinterColumns``, dates already turned into
ages; ``-o wide`` adds the priority > 0 ones. ``WHY`` is ``kubectl ray why``'s one-line
verdict from the object alone (``-`` when ready; ``why`` itself also reads pods and
Events). ``-o name`` prints ``KIND.GROUP/NAME``; ``-o json|yaml`` the objects (a ``List``
when several). Nothing found: "No resources found in NS namespace." on stderr, exit 0.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from kuberay.api.v1.constants import API_VERSION
from kuberay.kube import objects as k8s
from kuberay.kubectl_ray.common import add_all_namespaces_flag
from kuberay.kubectl_ray.context import CLIError, Env
from kuberay.kubectl_ray.output import as_list, dump, format_table

if TYPE_CHECKING:
    from kuberay.kube.objects import Object as Obj

TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
#: ``get`` resource word -> (kind, plural, aliases).
LISTED = {
    "job": ("RayJob", "rayjobs", ["jobs", "rayjob", "rayjobs"]),
    "service": ("RayService", "rayservices", ["services", "rayservice", "rayservices"]),
    "cronjob": ("RayCronJob", "raycronjobs", ["cronjobs", "raycronjob", "raycronjobs"]),
}
WHY_WIDTH = 60
LIST_FORMATS = ("json", "yaml", "wide", "name")


def register_listings(kinds: Any, common: argparse.ArgumentParser) -> None:
    """Add ``get job``, ``get service`` and ``get cronjob`` under ``get``."""
    for word, (kind, _, aliases) in LISTED.items():
        p = kinds.add_parser(
            word,
            aliases=aliases,
            help=f"List {kind}s (the CRD's columns plus WHY).",
            parents=[common],
            epilog=f"examples:\n  kubectl ray get {word}\n  kubectl ray get {word} -A -o wide\n"
            f"  kubectl ray get {word} NAME -o yaml",
        )
        p.add_argument("name", nargs="?", default="", help=f"a {kind} name (default: all)")
        add_all_namespaces_flag(p, f"the {kind}s")
        p.add_argument(
            "-o", "--output", choices=LIST_FORMATS, default=None,
            help="output format: json|yaml|wide|name (default: a table)",
        )  # fmt: skip
        p.set_defaults(handler=get_listing, listed_kind=kind)


def why_cell(obj: Obj) -> str:
    """The WHY column: ``-`` when ready, else the first finding, cut to one short line."""
    kind = obj.get("kind")
    if kind == "RayCronJob":
        return "suspended" if k8s.spec(obj).get("suspend") else "-"
    from kuberay.diagnosis.rules import Snapshot, diagnose

    verdict = diagnose(Snapshot(obj=obj))
    if verdict.ready:
        return "-"
    top = verdict.findings[0].message if verdict.findings else verdict.summary
    line = next((s.strip() for s in str(top).splitlines() if s.strip()), "")
    return line if len(line) <= WHY_WIDTH else line[: WHY_WIDTH - 3] + "..."


async def fetch_table(env: Env, kind: str, name: str) -> Obj:
    """The apiserver's Table for ``kind`` (objects included), optionally one name."""
    client = await env.client()
    info = await client.resource(API_VERSION, kind)
    params: dict[str, Any] = {"includeObject": "Object"}
    if name:
        params["fieldSelector"] = f"metadata.name={name}"
    table: Obj = await client.request(
        "GET", info.path(env.list_namespace()), verb="list", params=params, accept=TABLE_ACCEPT
    )
    return table


def table_text(table: Obj, all_namespaces: bool, wide: bool) -> str:
    """The rows as kubectl prints them, with NAMESPACE first under ``-A`` and WHY last."""
    columns = table.get("columnDefinitions") or []
    shown = [i for i, c in enumerate(columns) if wide or not c.get("priority")]
    headers = [str(columns[i].get("name", "")) for i in shown] + ["Why"]
    if all_namespaces:
        headers.insert(0, "Namespace")
    rows: list[list[object]] = []
    for row in table.get("rows") or []:
        cells = row.get("cells") or []
        obj = row.get("object") or {}
        line: list[object] = [cells[i] if i < len(cells) else "" for i in shown]
        line = ["<none>" if c is None or c == "" else c for c in line]
        line.append(why_cell(obj))
        if all_namespaces:
            line.insert(0, k8s.meta(obj).get("namespace", ""))
        rows.append(line)
    return format_table(headers, rows)


async def get_listing(env: Env, args: argparse.Namespace) -> None:
    """``get job|service|cronjob``: the table, ``-o name``, or the objects as JSON/YAML."""
    kind = str(args.listed_kind)
    plural = next(p for k, p, _ in LISTED.values() if k == kind)
    table = await fetch_table(env, kind, args.name)
    objects = [
        {"apiVersion": API_VERSION, "kind": kind, **(r.get("object") or {})}
        for r in table.get("rows") or []
    ]
    if args.name and not objects:
        raise CLIError(f'{plural}.ray.io "{args.name}" not found')
    fmt = args.output
    if fmt in ("json", "yaml"):
        env.stdout.write(dump(objects[0] if args.name else as_list(objects), fmt))
        return
    if not objects:
        where = "" if env.all_namespaces else f" in {env.namespace} namespace"
        env.err(f"No resources found{where}.")
        return
    if fmt == "name":
        for obj in objects:
            env.out(f"{kind.lower()}.ray.io/{obj['metadata']['name']}")
        return
    env.stdout.write(table_text(table, env.all_namespaces, wide=fmt == "wide"))


__all__ = ["LISTED", "fetch_table", "get_listing", "register_listings", "table_text", "why_cell"]
