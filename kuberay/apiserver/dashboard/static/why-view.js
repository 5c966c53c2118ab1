// The "Why" section of a detail page: the diagnosis `kubectl ray why` prints, from the API
// server's Why route (read as the caller; reads the caller may not make are listed as notes).

import { describeError } from "./api.js";

/** The URL of the Why route for `name` of `plural` in `namespace`, relative to `root`. */
export function whyUrl(root, namespace, plural, name) {
  const path = [namespace, plural, name].map(encodeURIComponent).join("/");
  return new URL(`dashboard/api/namespaces/${path}/why`, root);
}

/** The kinds (plurals) the diagnosis knows; other pages have no Why section. */
export const DIAGNOSED = ["rayclusters", "rayjobs", "rayservices"];

/** The words a finding's severity reads as, and its pill's tone. */
export const SEVERITY = {
  error: { text: "error", tone: "bad" },
  warning: { text: "warning", tone: "busy" },
  info: { text: "info", tone: "" },
};

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** The list items of `findings` (severity pill, object, message, hint). */
export function findingItems(findings) {
  return findings.map((f) => {
    const li = element("li", "finding");
    const severity = SEVERITY[f.severity] || { text: String(f.severity), tone: "" };
    const pill = element("span", "pill", severity.text);
    pill.dataset.tone = severity.tone;
    li.append(pill, " ", element("code", "", f.object), " ", element("span", "finding-message", f.message));
    if (f.hint) li.append(element("p", "hint", f.hint));
    return li;
  });
}

/** Fill `section` with the diagnosis of `name` of `plural` in `namespace` read through
 * `api` (an Api); a refused read shows what was refused. */
export async function loadWhy(section, api, namespace, plural, name, signal) {
  section.hidden = !DIAGNOSED.includes(plural);
  if (section.hidden) return;
  const title = element("h2", "", "Why");
  title.id = "why-title";
  section.setAttribute("aria-labelledby", "why-title");
  let diagnosis;
  try {
    diagnosis = await (await api.get(whyUrl(api.root, namespace, plural, name), signal)).json();
  } catch (error) {
    if (signal.aborted) return;
    const notice = element("p", "notice", describeError(error, "get", plural, namespace).title);
    notice.setAttribute("role", "alert");
    section.replaceChildren(title, notice);
    return;
  }
  if (signal.aborted) return;
  const verdict = element("p", "why-verdict", diagnosis.summary);
  verdict.dataset.ready = diagnosis.ready ? "yes" : "no";
  const parts = [title, verdict];
  if (diagnosis.findings?.length) {
    const list = element("ul", "findings");
    list.append(...findingItems(diagnosis.findings));
    parts.push(list);
  }
  for (const note of diagnosis.notes || []) parts.push(element("p", "hint", `Not judged: ${note}.`));
  section.replaceChildren(...parts);
}
