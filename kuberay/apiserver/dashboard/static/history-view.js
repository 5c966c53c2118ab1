// The "History" section of a detail page (only when the server has --history-server-url):
// the sessions the history server keeps of this object, read through the API server's
// History route (after the same rights check as the object), each a link to the history
// server's page of that session.

import { describeError } from "./api.js";
import { DIAGNOSED } from "./why-view.js";

/** The URL of the History route for `name` of `plural` in `namespace`, relative to `root`. */
export function historyUrl(root, namespace, plural, name) {
  const path = [namespace, plural, name].map(encodeURIComponent).join("/");
  return new URL(`dashboard/api/namespaces/${path}/history`, root);
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A link to the history server's page of `session` (only http(s) URLs become links). */
export function sessionLink(session) {
  const url = new URL(session.url, location.href);
  if (url.protocol !== "http:" && url.protocol !== "https:") return element("span", "", session.sessionName);
  const link = element("a", "", `${session.cluster} / ${session.sessionName}`);
  link.href = url.href;
  link.target = "_blank";
  link.rel = "noopener noreferrer";
  return link;
}

/** Fill `section` with the history sessions of `name` of `plural` in `namespace`. */
export async function loadHistory(section, api, namespace, plural, name, signal) {
  const title = element("h2", "", "History");
  title.id = "history-title";
  section.setAttribute("aria-labelledby", "history-title");
  section.hidden = !DIAGNOSED.includes(plural); // the kinds whose clusters it keeps
  if (section.hidden) return;
  let answer;
  try {
    answer = await (await api.get(historyUrl(api.root, namespace, plural, name), signal)).json();
  } catch (error) {
    if (signal.aborted) return;
    const text = error?.status === 502
      ? `The history server cannot be read: ${error.message}`
      : describeError(error, "get", plural, namespace).title;
    const notice = element("p", "notice", text);
    notice.setAttribute("role", "alert");
    section.replaceChildren(title, notice);
    return;
  }
  if (signal.aborted) return;
  const items = answer.items || [];
  if (!items.length) {
    section.replaceChildren(title, element("p", "empty", "The history server keeps no session of it."));
    return;
  }
  const list = element("ul", "history-sessions");
  for (const session of items) {
    const li = element("li");
    li.append(sessionLink(session));
    if (session.createTime) li.append(" ", element("span", "hint", `started ${session.createTime}`));
    list.append(li);
  }
  section.replaceChildren(title, list);
}
