// Calls to the API server's own ray.io routes (same origin), as the signed-in caller.
// The token goes in the Authorization header only: never in a URL, never logged.

import { ALL_NAMESPACES } from "./state.js";

/** Objects asked for per page of a list. */
export const PAGE_SIZE = 500;

/** `url` asking for compact JSON: the kube-apiserver indents its answers to a browser's
 * User-Agent ("Mozilla/5.0 ..."), which more than doubles a list (4.3 MB instead of 1.9 MB
 * for 500 RayClusters) and the time to send and parse it. */
export function compact(url) {
  url.searchParams.set("pretty", "false");
  return url;
}

/** A refused or failed call: the HTTP `status`, and the Kubernetes Status's `reason`,
 * `details` and `message` when the answer was one. */
export class ApiError extends Error {
  constructor(status, statusObject, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.reason = statusObject?.reason ?? "";
    this.details = statusObject?.details ?? {};
    this.serverMessage = statusObject?.message ?? "";
  }
}

/** The ApiError of a non-2xx `response` (its body read). */
export async function errorOf(response) {
  let text = "";
  let body = null;
  try {
    text = await response.text();
    body = JSON.parse(text);
  } catch {
    // not JSON: the text is the message
  }
  const status = body && body.kind === "Status" ? body : null;
  const message = status?.message || text.trim() || `HTTP ${response.status}`;
  return new ApiError(response.status, status, message);
}

/** The ray.io collection URL of `plural` in `namespace` (ALL_NAMESPACES: every one). */
export function collectionUrl(root, apiVersion, plural, namespace) {
  const scope = namespace === ALL_NAMESPACES ? "" : `namespaces/${encodeURIComponent(namespace)}/`;
  return new URL(`apis/${apiVersion}/${scope}${encodeURIComponent(plural)}`, root);
}

/** The events route's URL for the Events regarding the `kind` named `name` in `namespace`. */
export function eventsUrl(root, namespace, kind, name) {
  const url = new URL(`apis/events.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/events`, root);
  url.searchParams.set("fieldSelector", `regarding.kind=${kind},regarding.name=${name}`);
  return url;
}

/** The URL of the API server's Pods route for RayCluster `cluster` in `namespace` (the
 * cluster's Ray pods, trimmed; allowed to whoever may get the RayCluster). */
export function podsUrl(root, namespace, cluster) {
  return new URL(
    `dashboard/api/namespaces/${encodeURIComponent(namespace)}/rayclusters/${encodeURIComponent(cluster)}/pods`,
    root,
  );
}

/** The API as seen from this page: `root` is the server's base URL (the dashboard's parent,
 * so a path prefix in front of the server is kept), `token()` the caller's bearer token or
 * null (service-account mode). */
export class Api {
  constructor(root, apiVersion, token) {
    this.root = root;
    this.apiVersion = apiVersion;
    this.token = token;
  }

  async get(url, signal) {
    const headers = { Accept: "application/json" };
    const token = this.token();
    if (token) headers.Authorization = `Bearer ${token}`;
    const response = await fetch(url, {
      headers, signal, cache: "no-store", credentials: "omit", redirect: "error",
    });
    if (!response.ok) throw await errorOf(response);
    return response;
  }

  /** Every object of `plural` in `namespace` (paged) and the list's resourceVersion; only
   * those matching `fieldSelector` when one is given ("metadata.name=NAME": one object). */
  async list(plural, namespace, signal, fieldSelector = "") {
    const url = collectionUrl(this.root, this.apiVersion, plural, namespace);
    if (fieldSelector) url.searchParams.set("fieldSelector", fieldSelector);
    return this.listAt(url, signal);
  }

  /** Every item of the list at `url` (paged) and the list's resourceVersion. */
  async listAt(url, signal) {
    const items = [];
    let next = "";
    let resourceVersion = "";
    do {
      const page = compact(new URL(url));
      page.searchParams.set("limit", String(PAGE_SIZE));
      if (next) page.searchParams.set("continue", next);
      const answer = await (await this.get(page, signal)).json();
      items.push(...(answer.items || []));
      resourceVersion = answer.metadata?.resourceVersion || resourceVersion;
      next = answer.metadata?.continue || "";
    } while (next);
    return { items, resourceVersion };
  }

  /** One object: `name` of `plural` in `namespace`. */
  async object(plural, namespace, name, signal) {
    const url = compact(new URL(
      `apis/${this.apiVersion}/namespaces/${encodeURIComponent(namespace)}/${encodeURIComponent(plural)}/${encodeURIComponent(name)}`,
      this.root,
    ));
    return (await this.get(url, signal)).json();
  }

  /** The Events regarding the `kind` named `name` in `namespace` and the list's
   * resourceVersion, through the API server's events route (which keeps them to ray.io
   * objects). */
  async events(namespace, kind, name, signal) {
    return this.listAt(eventsUrl(this.root, namespace, kind, name), signal);
  }

  /** The streaming answer of a watch of the Events regarding the `kind` named `name` in
   * `namespace` from `resourceVersion`, through the events route (which passes watch=true
   * on, its selector kept). */
  async watchEvents(namespace, kind, name, resourceVersion, signal) {
    return this.watchAt(eventsUrl(this.root, namespace, kind, name), resourceVersion, signal);
  }

  /** The Ray pods of RayCluster `cluster` in `namespace` (name, nodeType, group, phase,
   * ready, restarts, creationTimestamp, startTime each), through the Pods route. */
  async pods(namespace, cluster, signal) {
    return ((await (await this.get(podsUrl(this.root, namespace, cluster), signal)).json()).items || []);
  }

  /** The streaming answer of a watch of `plural` in `namespace` from `resourceVersion`
   * (JSON lines: one event each), bookmarks asked for; only objects matching
   * `fieldSelector` when one is given. */
  async watch(plural, namespace, resourceVersion, signal, fieldSelector = "") {
    const url = collectionUrl(this.root, this.apiVersion, plural, namespace);
    if (fieldSelector) url.searchParams.set("fieldSelector", fieldSelector);
    return this.watchAt(url, resourceVersion, signal);
  }

  /** The streaming answer of a watch of the collection at `url` from `resourceVersion`. */
  async watchAt(url, resourceVersion, signal) {
    const watch = new URL(url);
    watch.searchParams.set("watch", "true");
    watch.searchParams.set("resourceVersion", resourceVersion);
    watch.searchParams.set("allowWatchBookmarks", "true");
    return this.get(watch, signal);
  }
}

/** Where, in words: "namespace NS" or "all namespaces". */
export function where(namespace) {
  return namespace === ALL_NAMESPACES ? "all namespaces" : `namespace ${namespace}`;
}

/** What a person reads for `error` when `verb`ing `plural` in `namespace`: a `title` and a
 * `detail` (the server's own words). A 403 names the verb, the resource (the Status's
 * details) and the namespace. */
export function describeError(error, verb, plural, namespace) {
  if (!(error instanceof ApiError)) {
    return { title: "The API server cannot be reached.", detail: String(error?.message || error) };
  }
  const resource = error.details?.kind || plural;
  const group = error.details?.group ? ` (API group ${error.details.group})` : "";
  if (error.status === 403) {
    return {
      title: `You may not ${verb} ${resource} in ${where(namespace)}.`,
      detail: `Ask for a Role granting "${verb}" on ${resource}${group} there, or choose another namespace. ${error.serverMessage}`.trim(),
    };
  }
  if (error.status === 404) {
    return {
      title: `This cluster serves no ${resource}: is KubeRay's CRD installed?`,
      detail: error.message,
    };
  }
  if (error.status === 401) {
    return { title: "The server refused your token (401 Unauthorized).", detail: error.message };
  }
  return { title: `The API server answered ${error.status}.`, detail: error.message };
}
