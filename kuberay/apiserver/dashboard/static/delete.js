// Deleting the object a detail page shows: a Delete button opens a modal <dialog> where the
// person types the object's name to confirm (as many admin UIs ask); only then the DELETE,
// as the signed-in caller, and back to the list. A refusal reads as a sentence in the dialog.

import { describeError, where } from "./api.js";
import { remove } from "./writes.js";

/** Whether `typed` confirms deleting `name` (surrounding white space forgiven). */
export function confirms(typed, name) {
  return typeof typed === "string" && typed.trim() === name;
}

function element(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  node.append(...children);
  return node;
}

/** Wire `button` to delete `state`'s object (`kind`: config.json's entry) through `api`;
 * callbacks: `deleted()` once it is gone, `unauthorized()` on a 401. */
export function attachDelete(button, api, kind, state, callbacks) {
  button.hidden = false;
  button.addEventListener("click", () => openDialog(button, api, kind, state, callbacks));
}

function openDialog(opener, api, kind, state, callbacks) {
  const { namespace, name } = state;
  const title = element("h2", { id: "delete-title", textContent: `Delete ${kind.kind} ${name}?` });
  const text = element("p", {
    id: "delete-text",
    textContent: `${kind.kind} ${name} in ${where(namespace)} and what it owns (its Ray cluster and Pods) will be deleted. This cannot be undone.`,
  });
  const input = element("input", {
    id: "delete-confirm", type: "text", autocomplete: "off", spellcheck: false,
  });
  const label = element("label", { htmlFor: "delete-confirm" }, "Type ", element("code", { textContent: name }), " to confirm");
  const error = element("p", { className: "error", hidden: true });
  error.setAttribute("role", "alert");
  const confirm = element("button", { type: "submit", className: "danger", textContent: "Delete", disabled: true });
  const cancel = element("button", { type: "button", textContent: "Cancel" });
  const form = element("form", { method: "dialog", className: "confirm" },
    title, text, label, input, error, element("div", { className: "actions" }, confirm, cancel));
  const dialog = element("dialog", { className: "delete" }, form);
  dialog.setAttribute("aria-labelledby", "delete-title");
  dialog.setAttribute("aria-describedby", "delete-text");
  input.addEventListener("input", () => {
    confirm.disabled = !confirms(input.value, name);
  });
  cancel.addEventListener("click", () => dialog.close());
  dialog.addEventListener("close", () => {
    dialog.remove();
    if (opener.isConnected) opener.focus();
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (!confirms(input.value, name)) return;
    confirm.disabled = true;
    error.hidden = true;
    try {
      await remove(api, kind.plural, namespace, name);
    } catch (failure) {
      if (failure?.status === 401) {
        dialog.close();
        callbacks.unauthorized();
        return;
      }
      const described = failure?.status === 404
        ? { title: `${kind.kind} ${name} is already gone.`, detail: "" }
        : describeError(failure, "delete", kind.plural, namespace);
      error.textContent = `${described.title} ${described.detail}`.trim();
      error.hidden = false;
      confirm.disabled = !confirms(input.value, name);
      return;
    }
    dialog.close();
    callbacks.deleted();
  });
  document.body.append(dialog);
  dialog.showModal();
  input.focus();
}
