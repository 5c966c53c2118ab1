// The "Driver log" section of a RayJob's page: the tail of its driver log, read through the
// API server's log route (as the caller: the RayJob, its RayCluster, then the Ray dashboard
// through the Service proxy), shown as text with its own Refresh button.

import { describeError } from "./api.js";

/** The URL of the log route for RayJob `name` in `namespace`, relative to `root`. */
export function logUrl(root, namespace, name) {
  const path = [namespace, "rayjobs", name].map(encodeURIComponent).join("/");
  return new URL(`dashboard/api/namespaces/${path}/log`, root);
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The driver log section of RayJob `name` in `namespace`, in `section`, read through
 * `api`; it reads again on its Refresh button. Returns `destroy()`. */
export function driverLog(section, api, namespace, name) {
  let abort = null;
  const title = element("h2", "", "Driver log");
  title.id = "log-title";
  const refresh = element("button", "", "Refresh log");
  refresh.type = "button";
  const bar = element("div", "bar");
  bar.append(title, element("span", "grow"), refresh);
  const status = element("p", "hint");
  status.setAttribute("role", "status");
  const pre = element("pre", "driver-log");
  pre.tabIndex = 0; // scrollable by keyboard
  pre.setAttribute("aria-labelledby", "log-title");
  section.setAttribute("aria-labelledby", "log-title");
  section.replaceChildren(bar, status, pre);
  section.hidden = false;

  async function load() {
    abort?.abort();
    const mine = new AbortController();
    abort = mine;
    status.textContent = "Loading…";
    let answer;
    try {
      answer = await (await api.get(logUrl(api.root, namespace, name), mine.signal)).json();
    } catch (error) {
      if (mine.signal.aborted) return;
      status.textContent = error?.status === 403
        ? `${describeError(error, "get", error?.details?.kind || "services/proxy", namespace).title} ${error.serverMessage || ""}`.trim()
        : `The log cannot be read: ${error?.message || error}`;
      pre.textContent = "";
      pre.hidden = true;
      return;
    }
    if (mine.signal.aborted) return;
    if (answer.pending) {
      status.textContent = "No Ray job yet: the log appears once the job is submitted.";
      pre.hidden = true;
      return;
    }
    const cut = answer.truncated ? " (its last 64 KiB)" : "";
    status.textContent = `Ray job ${answer.jobId} on ${answer.cluster}${cut}, read at ${new Date().toLocaleTimeString()}`;
    pre.textContent = answer.log || "(empty)";
    pre.hidden = false;
    pre.scrollTop = pre.scrollHeight; // the newest lines in view
  }

  refresh.addEventListener("click", load);
  load();
  return { destroy: () => abort?.abort(), load };
}
