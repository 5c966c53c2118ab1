// The "New RayJob" page (?namespace=NS&kind=rayjobs&new=1): a form, or a pasted manifest
// (JSON, or YAML read by the API server), checked by a dry run of the create first (the
// CRD's schema and the admission webhooks judge it, nothing is stored), each refusal shown
// next to the field it names; created only when the dry run passes, then its page opens.

import { describeError, where } from "./api.js";
import { FIELDS, manifestOf, pastedManifest, placeCauses } from "./rayjob-form.js";
import { ALL_NAMESPACES } from "./state.js";
import { create, yamlToObject } from "./writes.js";

const PLURAL = "rayjobs";

/** Whether `error` is an admission webhook's denial (a Status like RBAC's 403, but the
 * webhook's words: not a missing right). */
export function isWebhookDenial(error) {
  return /admission webhook/i.test(error?.serverMessage || error?.message || "");
}

/** What the summary above the form says for a refused create of `error` in `namespace`:
 * a `title` and `lines` (causes no field shows, or the server's message). */
export function refusalSummary(error, namespace, rest) {
  if (error?.status === 403 && !isWebhookDenial(error)) {
    const { title, detail } = describeError(error, "create", PLURAL, namespace);
    return { title, lines: [detail] };
  }
  if (!error?.status) return { title: describeError(error, "create", PLURAL, namespace).title, lines: [] };
  const lines = rest.length ? rest : [error.serverMessage || error.message];
  return { title: "The RayJob was not created: the API server refused it.", lines };
}

function refs(root) {
  const found = {};
  for (const element of root.querySelectorAll("[data-ref]")) found[element.dataset.ref] = element;
  return found;
}

function fieldElement(field, namespace) {
  const id = `new-${field.id}`;
  const wrap = document.createElement("div");
  wrap.className = field.type === "checkbox" ? "field check" : "field";
  const label = document.createElement("label");
  label.htmlFor = id;
  label.textContent = field.label;
  let input;
  if (field.type === "textarea") {
    input = document.createElement("textarea");
    input.rows = field.id === "entrypoint" ? 2 : 3;
  } else {
    input = document.createElement("input");
    input.type = field.type;
    if (field.type === "number") input.min = "0";
  }
  input.id = id;
  input.name = field.id;
  input.spellcheck = false;
  input.autocomplete = "off";
  if (field.required) input.setAttribute("aria-required", "true");
  const initial = field.id === "namespace" ? (namespace === ALL_NAMESPACES ? "" : namespace) : field.initial;
  if (field.type === "checkbox") input.checked = Boolean(initial);
  else input.value = initial ?? "";
  const described = [];
  const parts = field.type === "checkbox" ? [input, label] : [label, input];
  if (field.hint) {
    const hint = document.createElement("p");
    hint.className = "hint";
    hint.id = `${id}-hint`;
    hint.textContent = field.hint;
    parts.push(hint);
    described.push(hint.id);
  }
  const error = document.createElement("p");
  error.className = "field-error";
  error.id = `${id}-error`;
  error.hidden = true;
  parts.push(error);
  described.push(error.id);
  input.setAttribute("aria-describedby", described.join(" "));
  wrap.append(...parts);
  return { wrap, input, error };
}

export class CreateView {
  /** `container` gets the page; `api` an Api; callbacks: `navigate(changes, push)`,
   * `unauthorized()`. */
  constructor(container, api, callbacks) {
    this.api = api;
    this.callbacks = callbacks;
    this.busy = false;
    const page = document.getElementById("create-template").content.cloneNode(true);
    this.el = refs(page);
    container.replaceChildren(page);
    this.el.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.submit();
    });
    this.el.cancel.addEventListener("click", () => this.callbacks.navigate({ create: false }, true));
    this.el.back.addEventListener("click", (event) => {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      this.callbacks.navigate({ create: false }, true);
    });
    for (const tab of [this.el.formTab, this.el.yamlTab]) {
      tab.addEventListener("click", () => this.choose(tab));
      tab.addEventListener("keydown", (event) => {
        if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
        event.preventDefault();
        const other = tab === this.el.formTab ? this.el.yamlTab : this.el.formTab;
        this.choose(other);
        other.focus();
      });
    }
  }

  destroy() {}

  /** Show the empty form for `state` (from the URL): its namespace filled in. */
  show(state) {
    this.state = state;
    const list = new URLSearchParams({ namespace: state.namespace, kind: PLURAL });
    this.el.back.href = `?${list}`;
    this.el.back.textContent = `← RayJobs in ${where(state.namespace)}`;
    this.inputs = new Map();
    const parts = FIELDS.map((field) => {
      const built = fieldElement(field, state.namespace);
      this.inputs.set(field.id, built);
      return built.wrap;
    });
    this.el.fields.replaceChildren(...parts);
    const first = this.inputs.get(state.namespace === ALL_NAMESPACES ? "namespace" : "name").input;
    first.focus();
  }

  yamlMode() {
    return this.el.yamlTab.getAttribute("aria-selected") === "true";
  }

  choose(tab) {
    const yaml = tab === this.el.yamlTab;
    this.el.formTab.setAttribute("aria-selected", String(!yaml));
    this.el.yamlTab.setAttribute("aria-selected", String(yaml));
    this.el.formTab.tabIndex = yaml ? -1 : 0;
    this.el.yamlTab.tabIndex = yaml ? 0 : -1;
    this.el.formPanel.hidden = yaml;
    this.el.yamlPanel.hidden = !yaml;
  }

  values() {
    const values = {};
    for (const [id, { input }] of this.inputs) values[id] = input.type === "checkbox" ? input.checked : input.value;
    return values;
  }

  clearErrors() {
    for (const { input, error } of this.inputs.values()) {
      input.removeAttribute("aria-invalid");
      error.hidden = true;
      error.textContent = "";
    }
    this.el.manifest.removeAttribute("aria-invalid");
    this.el.manifestError.hidden = true;
    this.el.summary.hidden = true;
  }

  showFieldError(id, messages) {
    const { input, error } = this.inputs.get(id);
    input.setAttribute("aria-invalid", "true");
    error.textContent = messages.join(" ");
    error.hidden = false;
    return input;
  }

  showManifestError(message) {
    this.el.manifest.setAttribute("aria-invalid", "true");
    this.el.manifestError.textContent = message;
    this.el.manifestError.hidden = false;
    this.el.manifest.focus();
  }

  showSummary(title, lines) {
    this.el.summaryTitle.textContent = title;
    this.el.summaryList.replaceChildren(...lines.filter(Boolean).map((text) => {
      const li = document.createElement("li");
      li.textContent = text;
      return li;
    }));
    this.el.summary.hidden = false;
  }

  /** The manifest to send (null: a problem was shown instead). */
  async manifest() {
    const namespace = this.inputs.get("namespace").input.value.trim();
    if (!this.yamlMode()) return manifestOf(this.values());
    const text = this.el.manifest.value;
    if (!text.trim()) {
      this.showManifestError("Paste a RayJob manifest first.");
      return null;
    }
    let object;
    try {
      object = JSON.parse(text);
    } catch {
      try {
        object = await yamlToObject(this.api, text);
      } catch (error) {
        if (error?.status === 401) this.callbacks.unauthorized();
        else this.showManifestError(`Not a manifest: ${error.serverMessage || error.message}`);
        return null;
      }
    }
    const manifest = pastedManifest(object, namespace);
    if (!manifest) this.showManifestError("Not a manifest: paste one object (apiVersion, kind, metadata, spec).");
    else if (!manifest.metadata.namespace) this.showManifestError("Name the namespace: in the manifest's metadata or the form's Namespace.");
    else return manifest;
    return null;
  }

  /** The dry run, then the create; the new RayJob's page on success. */
  async submit() {
    if (this.busy) return;
    this.busy = true;
    this.el.submit.disabled = true;
    this.clearErrors();
    try {
      const object = await this.manifest();
      if (!object) return;
      if (!object.metadata?.namespace) {
        this.showFieldError("namespace", ["Required: the namespace to create the RayJob in."]).focus();
        return;
      }
      this.el.progress.textContent = "Checking (a dry run: nothing is created yet)…";
      await create(this.api, PLURAL, object, true);
      this.el.progress.textContent = "Creating…";
      const created = await create(this.api, PLURAL, object, false);
      this.callbacks.navigate(
        { namespace: created.metadata.namespace, kind: PLURAL, name: created.metadata.name, create: false },
        false,
      );
    } catch (error) {
      this.refused(error);
    } finally {
      this.busy = false;
      this.el.submit.disabled = false;
      this.el.progress.textContent = "";
    }
  }

  refused(error) {
    if (error?.status === 401) {
      this.callbacks.unauthorized();
      return;
    }
    const yaml = this.yamlMode();
    const namespace = this.inputs.get("namespace").input.value.trim() || this.state.namespace;
    const { byField, rest } = placeCauses(error?.details?.causes, yaml ? [] : FIELDS);
    let first = null;
    for (const [id, messages] of byField) {
      const input = this.showFieldError(id, messages);
      first = first || input;
    }
    if (rest.length || !byField.size) {
      const { title, lines } = refusalSummary(error, namespace, rest);
      this.showSummary(title, lines);
      if (yaml) this.el.manifest.setAttribute("aria-invalid", "true");
    }
    if (first) first.focus();
    else this.el.summary.focus();
  }
}
