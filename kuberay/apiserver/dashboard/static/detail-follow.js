// What an object's page follows: the object itself (a ListWatch of its kind in its
// namespace with fieldSelector metadata.name=NAME, through the server's ray.io proxy) and
// the Events about it (a ListWatch of the events route, which passes watch=true on and
// keeps its ray.io selector). Pure decisions here; detail-view.js applies them.

import { where } from "./api.js";
import { collectionSource } from "./watch.js";

/** The field selector naming one object: "metadata.name=NAME". */
export function nameSelector(name) {
  return `metadata.name=${name}`;
}

/** The ListWatch source of the object `name` of `plural` in `namespace` (its list holds it,
 * or nothing once it is deleted). */
export function objectSource(api, plural, namespace, name) {
  return collectionSource(api, plural, namespace, nameSelector(name));
}

/** The ListWatch source of the Events about the `kind` named `name` in `namespace`. */
export function eventsSource(api, namespace, kind, name) {
  return {
    list: (signal) => api.events(namespace, kind, name, signal),
    watch: (resourceVersion, signal) => api.watchEvents(namespace, kind, name, resourceVersion, signal),
  };
}

function statusText(object) {
  return JSON.stringify(object?.status ?? null);
}

/** What happened between the object the page shows (`shown`, null: none) and the one the
 * watch holds now (`next`, null/undefined: none):
 * "none" (nothing new), "deleted", "appeared" (none was shown), "replaced" (another uid: a
 * new object of the same name), "status" (its status changed) or "changed" (something
 * else: spec, labels...). */
export function objectChange(shown, next) {
  if (!shown && !next) return "none";
  if (!next) return "deleted";
  if (!shown) return "appeared";
  if ((shown.metadata?.uid || "") !== (next.metadata?.uid || "")) return "replaced";
  const version = next.metadata?.resourceVersion;
  if (version && version === shown.metadata?.resourceVersion) return "none";
  return statusText(shown) === statusText(next) ? "changed" : "status";
}

/** What the page's live mark says while the object's watch is in `phase` (ListWatch's
 * status: "loading", "live", "retrying", "stopped") with `detail`; `readAt` is when the
 * object was last read. Returns `{text, title}`, or null to leave the mark as it is. */
export function liveMark(phase, detail, readAt, plural, namespace) {
  if (phase === "live") {
    return { text: "Live", title: "Changes appear as they happen (a Kubernetes watch)." };
  }
  if (phase === "retrying") {
    return {
      text: `Reconnecting in ${Math.ceil(detail.delay / 1000)} s`,
      title: `Read at ${readAt}; the watch failed: ${detail.error?.message || detail.error}`,
    };
  }
  if (phase === "stopped") {
    const verb = detail?.during || "watch";
    const refused = detail?.status === 403
      ? `You may not ${verb} ${plural} in ${where(namespace)}`
      : `The watch stopped: ${detail?.message || detail}`;
    return { text: `Not live (read at ${readAt})`, title: `${refused}; use Refresh.` };
  }
  return null;
}
