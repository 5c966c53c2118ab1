"""What the dashboard page is told at ``/dashboard/config.json`` (no credentials needed: it
holds nothing but how the server runs and the CRDs' column definitions).

* ``authMode``: ``caller`` (the page asks for a token and sends it as ``Authorization:
  Bearer``) or ``service-account`` (no login page: the server acts with its own rights);
* ``apiVersion``: the API the lists come from (``ray.io/v1``);
* ``kinds``: per listed kind, its ``kind``, ``plural`` and the ``columns`` ``kubectl get``
  prints (the CRD's ``additionalPrinterColumns``, from :mod:`kuberay.api.v1.printer_columns`,
  so each is defined once), with an ``age`` column added where the CRD has none (RayService).
  ``priority`` > 0 marks the ``-o wide`` ones;
* ``historyServer``: whether the server has ``--history-server-url`` (the detail pages then
  show the History section, :mod:`.history`). No Grafana link exists: none is configured.
"""

from __future__ import annotations

from typing import Any

from kuberay.api.v1.constants import API_VERSION, KINDS, PLURALS
from kuberay.api.v1.printer_columns import CREATION_TIMESTAMP_PATH, printer_columns

AGE_COLUMN = {"name": "age", "jsonPath": CREATION_TIMESTAMP_PATH, "type": "date"}


def list_columns(kind: str) -> list[dict[str, Any]]:
    """``kind``'s printer columns, plus ``age`` when none shows the creation time."""
    columns = printer_columns(kind)
    if not any(c["jsonPath"] == CREATION_TIMESTAMP_PATH for c in columns):
        columns.append(dict(AGE_COLUMN))
    return columns


def dashboard_config(auth_mode: str, history_server: bool = False) -> dict[str, Any]:
    """The page's configuration for a server in ``auth_mode`` (see the module doc)."""
    return {
        "authMode": auth_mode,
        "historyServer": history_server,
        "apiVersion": API_VERSION,
        "kinds": [
            {"kind": kind, "plural": PLURALS[kind], "columns": list_columns(kind)} for kind in KINDS
        ],
    }
