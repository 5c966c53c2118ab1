// The "New RayJob" form's rules, as pure functions (no DOM, no I/O): its fields, the
// RayJob a filled form stands for, and which field a refusal's cause belongs to.

/** The Ray version and image a new form starts with. */
export const DEFAULT_RAY_VERSION = "2.52.0";
export const DEFAULT_IMAGE = `rayproject/ray:${DEFAULT_RAY_VERSION}`;

const HEAD = "spec.rayClusterSpec.headGroupSpec.template.spec.containers[0]";
const WORKER = "spec.rayClusterSpec.workerGroupSpecs[0]";
const WORKER_CONTAINER = `${WORKER}.template.spec.containers[0]`;

/** The form's fields, in order: `id` (the input's id, after "new-"), `label`, `type`
 * (text, textarea, number, checkbox), `initial`, `required`, `hint`, and `paths`: the
 * object's field paths it fills (a refusal's cause naming one of them, or a field below
 * one, is shown next to it). */
export const FIELDS = [
  { id: "namespace", label: "Namespace", type: "text", required: true, paths: ["metadata.namespace"] },
  { id: "name", label: "Name", type: "text", required: true, paths: ["metadata.name"],
    hint: "Lower-case letters, digits, '-' and '.'." },
  { id: "entrypoint", label: "Entrypoint", type: "textarea", required: true, paths: ["spec.entrypoint"],
    hint: "The command the job runs, e.g. python train.py." },
  { id: "rayVersion", label: "Ray version", type: "text", initial: DEFAULT_RAY_VERSION,
    paths: ["spec.rayClusterSpec.rayVersion"] },
  { id: "image", label: "Ray image", type: "text", initial: DEFAULT_IMAGE, required: true,
    paths: [`${HEAD}.image`, `${WORKER_CONTAINER}.image`] },
  { id: "headCpu", label: "Head CPU", type: "text", initial: "1",
    paths: [`${HEAD}.resources.requests.cpu`, `${HEAD}.resources.limits.cpu`] },
  { id: "headMemory", label: "Head memory", type: "text", initial: "2Gi",
    paths: [`${HEAD}.resources.requests.memory`, `${HEAD}.resources.limits.memory`] },
  { id: "workerReplicas", label: "Worker replicas", type: "number", initial: "1",
    paths: [`${WORKER}.replicas`, `${WORKER}.minReplicas`, `${WORKER}.maxReplicas`] },
  { id: "workerCpu", label: "Worker CPU", type: "text", initial: "1",
    paths: [`${WORKER_CONTAINER}.resources.requests.cpu`, `${WORKER_CONTAINER}.resources.limits.cpu`] },
  { id: "workerMemory", label: "Worker memory", type: "text", initial: "2Gi",
    paths: [`${WORKER_CONTAINER}.resources.requests.memory`, `${WORKER_CONTAINER}.resources.limits.memory`] },
  { id: "shutdownAfterJobFinishes", label: "Delete the cluster when the job finishes", type: "checkbox",
    initial: true, paths: ["spec.shutdownAfterJobFinishes"] },
  { id: "ttlSecondsAfterFinished", label: "Seconds to keep it after the job finishes", type: "number",
    initial: "", paths: ["spec.ttlSecondsAfterFinished"], hint: "Empty: 0." },
  { id: "runtimeEnvYAML", label: "Runtime environment (YAML, optional)", type: "textarea", initial: "",
    paths: ["spec.runtimeEnvYAML"], hint: "e.g. pip: [numpy]" },
];

/** `text` as an integer when it is one (so the schema judges the number), else as typed. */
function integerOr(text) {
  const trimmed = String(text ?? "").trim();
  return /^-?\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
}

function resources(cpu, memory) {
  const amounts = {};
  if (String(cpu).trim()) amounts.cpu = String(cpu).trim();
  if (String(memory).trim()) amounts.memory = String(memory).trim();
  return Object.keys(amounts).length ? { requests: { ...amounts }, limits: { ...amounts } } : undefined;
}

function container(name, image, cpu, memory) {
  const c = { name, image: String(image).trim() };
  const r = resources(cpu, memory);
  if (r) c.resources = r;
  return c;
}

/** The RayJob `values` (field id -> string, or boolean for a checkbox) stand for: one head,
 * one worker group "workers" of the given replicas (the autoscaler's bounds 0..replicas). */
export function manifestOf(values) {
  const replicas = integerOr(values.workerReplicas);
  const spec = {
    entrypoint: String(values.entrypoint ?? "").trim(),
    shutdownAfterJobFinishes: Boolean(values.shutdownAfterJobFinishes),
    rayClusterSpec: {
      rayVersion: String(values.rayVersion ?? "").trim(),
      headGroupSpec: {
        rayStartParams: {},
        template: { spec: { containers: [container("ray-head", values.image, values.headCpu, values.headMemory)] } },
      },
      workerGroupSpecs: [{
        groupName: "workers",
        replicas,
        minReplicas: 0,
        maxReplicas: replicas,
        rayStartParams: {},
        template: { spec: { containers: [container("ray-worker", values.image, values.workerCpu, values.workerMemory)] } },
      }],
    },
  };
  if (!spec.rayClusterSpec.rayVersion) delete spec.rayClusterSpec.rayVersion;
  const ttl = String(values.ttlSecondsAfterFinished ?? "").trim();
  if (ttl) spec.ttlSecondsAfterFinished = integerOr(ttl);
  const runtimeEnv = String(values.runtimeEnvYAML ?? "");
  if (runtimeEnv.trim()) spec.runtimeEnvYAML = runtimeEnv;
  return {
    apiVersion: "ray.io/v1",
    kind: "RayJob",
    metadata: { name: String(values.name ?? "").trim(), namespace: String(values.namespace ?? "").trim() },
    spec,
  };
}

/** Whether the cause's `field` is `path` or lies below it ("a.b" is below "a", as is "a[0]"). */
export function within(field, path) {
  return field === path || field.startsWith(`${path}.`) || field.startsWith(`${path}[`);
}

/** The field id of `fields` a cause with `field` belongs to (null: none). */
export function fieldOf(field, fields = FIELDS) {
  if (!field) return null;
  return fields.find((f) => f.paths.some((path) => within(field, path)))?.id ?? null;
}

/** A refusal's causes (a Status's details.causes) split: `byField` (field id -> distinct
 * messages, the schema's own path left out) for those a field of `fields` fills, `rest` (texts, the field named) for the others.
 * `fields` empty: every cause is in `rest` (the pasted manifest has no fields). */
export function placeCauses(causes, fields = FIELDS) {
  const byField = new Map();
  const rest = [];
  for (const cause of Array.isArray(causes) ? causes : []) {
    const message = cause?.message || cause?.reason || "invalid";
    const id = fieldOf(cause?.field, fields);
    if (!id) {
      rest.push(cause?.field ? `${cause.field}: ${message}` : message);
      continue;
    }
    // next to its field the path is known: the schema's "<path> in body " goes, and one
    // field filling two paths (requests and limits) says a thing once
    const said = message.replace(`${cause.field} in body `, "");
    const messages = byField.get(id) || [];
    if (!messages.includes(said)) byField.set(id, [...messages, said]);
  }
  return { byField, rest };
}

/** The object a pasted manifest stands for, made ready to send to `namespace`: a RayJob's
 * apiVersion and kind filled in when missing, its namespace set when it names none. A
 * non-object is refused (null). */
export function pastedManifest(object, namespace) {
  if (!object || typeof object !== "object" || Array.isArray(object)) return null;
  const manifest = { apiVersion: "ray.io/v1", kind: "RayJob", ...object };
  manifest.metadata = { ...(object.metadata || {}) };
  if (!manifest.metadata.namespace) manifest.metadata.namespace = namespace;
  return manifest;
}
