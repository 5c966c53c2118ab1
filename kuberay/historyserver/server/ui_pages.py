"""The server's own two HTML pages, self-contained (inline CSS and script, no external
assets, no CDN):

* ``SELECT_CLUSTER_PAGE``: lists ``/clusters`` with a filter box and a Reload button (KubeRay
  v1.8: lists again at once, ``/clusters?reload=true``, past the server's listing cache);
  choosing a row calls ``/enter_cluster/<ns>/raycluster/<cluster name>/<session>`` for every
  row, a RayJob's or RayService's cluster too (as KubeRay's picker does: the cluster's own
  name picks exactly that cluster, where the owner's could pick its other cluster) and then
  opens the dashboard at ``/#/overview``. Data is put in the page with ``textContent`` only,
  never as HTML.
* ``no_ui_page()``: what ``/`` shows when no dashboard UI build is available, saying how
  to provide one; the API keeps working without it.
"""

from __future__ import annotations

import html

_STYLE = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem;color:#1b1f24}
h1{font-size:1.4rem;margin:0 0 1rem}
input{font-size:1rem;padding:.4rem .6rem;width:min(36rem,100%);box-sizing:border-box}
button{font-size:1rem;padding:.4rem .8rem;margin-left:.5rem}
table{border-collapse:collapse;margin-top:1rem;width:100%}
th,td{text-align:left;padding:.35rem .6rem;border-bottom:1px solid #d8dee4}
th{background:#f6f8fa;font-weight:600}
tr:hover td{background:#f6f8fa}
a{color:#0969da;text-decoration:none}a:hover{text-decoration:underline}
.muted{color:#656d76}.err{color:#cf222e}
code{background:#f6f8fa;padding:.1rem .3rem;border-radius:4px}
"""

SELECT_CLUSTER_PAGE = (
    """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>Ray history server: select a cluster</title>
<style>"""
    + _STYLE
    + """</style></head>
<body>
<h1>Ray history server</h1>
<p class="muted">Choose a stored cluster session to open it in the Ray dashboard.</p>
<input id="filter" type="search" placeholder="Filter by name, namespace, owner or session"
 autofocus aria-label="Filter"><button id="reload" type="button">Reload</button>
<p id="status" class="muted">Loading&hellip;</p>
<table id="clusters" hidden>
<thead><tr><th>Cluster</th><th>Namespace</th><th>Owner</th><th>Session</th><th>Created</th></tr>
</thead><tbody></tbody></table>
<script>
"use strict";
const body = document.querySelector("#clusters tbody");
const statusLine = document.getElementById("status");
let rows = [];
function cell(text) { const td = document.createElement("td"); td.textContent = text; return td; }
function enterUrl(c) {
  return "/enter_cluster/" + [c.namespace, "raycluster", c.name, c.sessionName]
    .map(encodeURIComponent).join("/");
}
async function enter(event, c) {
  event.preventDefault();
  statusLine.textContent = "Loading " + c.name + " / " + c.sessionName + "\\u2026";
  statusLine.className = "muted";
  try {
    const r = await fetch(enterUrl(c), {credentials: "same-origin"});
    if (!r.ok) {
      const body = await r.json().catch(() => ({}));
      throw new Error(body.msg || ("HTTP " + r.status));
    }
    window.location.href = "/#/overview";
  } catch (e) {
    statusLine.textContent = "Could not open it: " + e.message;
    statusLine.className = "err";
  }
}
function render() {
  const q = document.getElementById("filter").value.trim().toLowerCase();
  body.replaceChildren();
  let shown = 0;
  for (const c of rows) {
    const owner = c.ownerKind ? c.ownerKind + "/" + c.ownerName : "";
    const hay = [c.name, c.namespace, owner, c.sessionName].join(" ").toLowerCase();
    if (q && !hay.includes(q)) continue;
    const tr = document.createElement("tr");
    const link = document.createElement("a");
    link.href = enterUrl(c);
    link.textContent = c.name;
    link.addEventListener("click", (e) => enter(e, c));
    const first = document.createElement("td");
    first.appendChild(link);
    tr.append(first, cell(c.namespace), cell(owner), cell(c.sessionName), cell(c.createTime));
    body.appendChild(tr);
    shown++;
  }
  document.getElementById("clusters").hidden = shown === 0;
  statusLine.textContent = rows.length === 0 ? "No stored clusters."
    : shown + " of " + rows.length + " sessions";
}
function load(reload) {
  const button = document.getElementById("reload");
  button.disabled = true;
  statusLine.textContent = "Loading\u2026";
  statusLine.className = "muted";
  fetch(reload ? "/clusters?reload=true" : "/clusters", {credentials: "same-origin"})
    .then((r) => { if (!r.ok) throw new Error("HTTP " + r.status); return r.json(); })
    .then((data) => { rows = data; render(); })
    .catch((e) => { statusLine.textContent = "Could not list clusters: " + e.message;
                    statusLine.className = "err"; })
    .finally(() => { button.disabled = false; });
}
document.getElementById("filter").addEventListener("input", render);
document.getElementById("reload").addEventListener("click", () => load(true));
load(false);
</script>
</body></html>
"""
)


def no_ui_page(session_version: str | None) -> str:
    """The page for ``/`` when no UI build is available."""
    wanted = html.escape(session_version or "the session's Ray version")
    pin = html.escape(session_version or "X.Y.Z")
    return (
        """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Ray history server: no dashboard UI</title><style>"""
        + _STYLE
        + f"""</style></head>
<body>
<h1>No Ray dashboard UI build is available</h1>
<p>This history server serves Ray's own dashboard UI for stored sessions, but found no build
of it (wanted: {wanted}). Provide one in either way and restart the server:</p>
<ul>
<li>Install Ray next to the server (it is found without being imported):
 <code>pip install ray=={pin}</code></li>
<li>Or pass <code>--dashboard-ui-dir DIR</code>, where <code>DIR</code> holds one build
 (the <code>ray/dashboard/client/build/</code> directory of a Ray wheel) or one subdirectory
 per Ray version, e.g. <code>DIR/2.60/index.html</code>.</li>
</ul>
<p>The API works without it: <a href="/clusters">/clusters</a>,
<a href="/select_cluster">select a cluster</a>.</p>
</body></html>
"""
    )
