// Where an object's Ray cluster can be reached: the Ray dashboard through the API server's
// Service proxy (service-account mode) or the command that reaches it (caller mode: a link
// cannot carry the bearer token). Pure functions.

/** The head Service's port the Ray dashboard listens on (the operator names it so). */
export const DASHBOARD_PORT = "dashboard";

/** The name of the RayCluster behind `object` of `kind`: itself, a RayJob's
 * status.rayClusterName, a RayService's active cluster; "" when none. */
export function clusterNameOf(kind, object) {
  if (kind === "RayCluster") return object.metadata?.name || "";
  if (kind === "RayJob") return object.status?.rayClusterName || "";
  if (kind === "RayService") return object.status?.activeServiceStatus?.rayClusterName || "";
  return "";
}

/** The head Service of a RayCluster `cluster`, as its status names it ("" while it has
 * none: the link is shown only while the Service exists). */
export function headServiceOf(cluster) {
  return cluster?.status?.head?.serviceName || "";
}

/** The Service proxy URL of the Ray dashboard behind head Service `service` in
 * `namespace`, relative to the API server's `root`. */
export function rayDashboardUrl(root, namespace, service) {
  const target = `http:${encodeURIComponent(service)}:${DASHBOARD_PORT}`;
  return new URL(`api/v1/namespaces/${encodeURIComponent(namespace)}/services/${target}/proxy/`, root);
}

/** The commands that open the Ray dashboard of `cluster` in `namespace` from a shell. */
export function portForwardHint(namespace, cluster, service) {
  return [
    `kubectl ray session ${cluster} -n ${namespace}`,
    `kubectl -n ${namespace} port-forward service/${service} 8265:${DASHBOARD_PORT}`,
  ];
}
