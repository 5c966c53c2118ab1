// The calls that change the cluster (create, delete) and the server's YAML reader, as the
// signed-in caller (through `api`, an Api of api.js: its root, apiVersion and token).

import { errorOf } from "./api.js";

/** The URL of `plural` in `namespace`, or of the object `name` there when given. */
export function objectUrl(api, plural, namespace, name) {
  const tail = name ? `/${encodeURIComponent(name)}` : "";
  return new URL(
    `apis/${api.apiVersion}/namespaces/${encodeURIComponent(namespace)}/${encodeURIComponent(plural)}${tail}`,
    api.root,
  );
}

async function send(api, method, url, body, contentType) {
  const headers = { Accept: "application/json" };
  const token = api.token();
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = contentType;
  const response = await fetch(url, {
    method, headers, body, cache: "no-store", credentials: "omit", redirect: "error",
  });
  if (!response.ok) throw await errorOf(response);
  return response.json();
}

/** Create `object` (a manifest naming its namespace) as `plural`; with `dryRun` the
 * kube-apiserver only validates it (schema, admission webhooks) and stores nothing. An
 * unknown field is refused (strict field validation). The object as (it would be) stored,
 * or an ApiError. */
export function create(api, plural, object, dryRun) {
  const url = objectUrl(api, plural, object.metadata.namespace);
  if (dryRun) url.searchParams.set("dryRun", "All");
  url.searchParams.set("fieldValidation", "Strict"); // a misspelt field is an error, as kubectl's
  return send(api, "POST", url, JSON.stringify(object), "application/json");
}

/** Delete `name` of `plural` in `namespace` (its children go with it, in the background). */
export function remove(api, plural, namespace, name) {
  return send(api, "DELETE", objectUrl(api, plural, namespace, name));
}

/** The object of the one YAML document `text`, read by the API server (the page has no
 * YAML parser); an ApiError names the line when it is not one plain mapping. */
export function yamlToObject(api, text) {
  return send(api, "POST", new URL("dashboard/api/yaml-to-json", api.root), text, "application/yaml");
}
