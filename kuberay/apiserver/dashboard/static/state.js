// What the page shows, as it is written in its URL: /dashboard/?namespace=NS&kind=rayjobs
// (&sort=COLUMN&dir=desc&filter=TEXT); one object's detail page adds &name=NAME, the New
// RayJob form &new=1. Pure functions: no DOM, no I/O.

/** The namespace value meaning every namespace (not a valid namespace name, so never one). */
export const ALL_NAMESPACES = "_all";
/** The namespace shown when the URL names none, as kubectl's default. */
export const DEFAULT_NAMESPACE = "default";
/** The kind the dashboard can create (with &new=1: its form). */
export const CREATABLE = "rayjobs";
/** The sort column when the URL names none. */
export const DEFAULT_SORT = "name";

const NAMESPACE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Whether `text` is a valid namespace name (a DNS-1123 label). */
export function isNamespaceName(text) {
  return typeof text === "string" && text.length <= 63 && NAMESPACE_NAME.test(text);
}

/** The state written in `search` (a location.search string); `plurals` are the listed
 * kinds' plurals, the first one the default. */
export function readState(search, plurals) {
  const query = new URLSearchParams(search);
  const kind = query.get("kind");
  return {
    namespace: query.get("namespace") || DEFAULT_NAMESPACE,
    kind: plurals.includes(kind) ? kind : plurals[0],
    sort: query.get("sort") || DEFAULT_SORT,
    dir: query.get("dir") === "desc" ? "desc" : "asc",
    filter: query.get("filter") || "",
    name: query.get("name") || "",
    create: query.get("new") === "1" && kind === CREATABLE,
  };
}

/** The query string ("?...") of `state`; sort, direction, filter and name only when not
 * the defaults, so a plain link stays short. */
export function writeState(state) {
  const query = new URLSearchParams();
  query.set("namespace", state.namespace);
  query.set("kind", state.kind);
  if (state.sort !== DEFAULT_SORT || state.dir !== "asc") {
    query.set("sort", state.sort);
    query.set("dir", state.dir);
  }
  if (state.filter) query.set("filter", state.filter);
  if (state.name) query.set("name", state.name);
  if (state.create) query.set("new", "1");
  return `?${query}`;
}

/** Whether going from state `a` to `b` needs another list (namespace or kind changed). */
export function sameList(a, b) {
  return a !== null && b !== null && a.namespace === b.namespace && a.kind === b.kind;
}
