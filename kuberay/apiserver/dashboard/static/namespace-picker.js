// The namespace selector in the header: "All namespaces", the namespaces this browser knows
// of, and "Other namespace…" to type one. Choosing one calls `choose(namespace)`.

import { ALL_NAMESPACES, isNamespaceName } from "./state.js";

const OTHER = "";

export class NamespacePicker {
  constructor(form, choose) {
    this.form = form;
    this.select = form.querySelector("select");
    this.other = form.querySelector("[data-ref=other]");
    this.input = form.querySelector("input");
    this.current = null;
    this.select.addEventListener("change", () => {
      if (this.select.value === OTHER) {
        this.other.hidden = false;
        this.input.value = "";
        this.input.focus();
      } else {
        this.other.hidden = true;
        choose(this.select.value);
      }
    });
    this.input.addEventListener("input", () => this.input.setCustomValidity(""));
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const name = this.input.value.trim();
      if (!isNamespaceName(name)) {
        this.input.setCustomValidity("A namespace name: lower-case letters, digits and dashes.");
        this.input.reportValidity();
        return;
      }
      this.other.hidden = true;
      choose(name);
    });
  }

  /** Show `namespace` as chosen, with `known` (an iterable of names) to choose from. */
  set(namespace, known) {
    const names = new Set(known);
    if (namespace !== ALL_NAMESPACES) names.add(namespace);
    const options = [new Option("All namespaces", ALL_NAMESPACES)];
    for (const name of [...names].sort()) options.push(new Option(name, name));
    options.push(new Option("Other namespace…", OTHER));
    this.select.replaceChildren(...options);
    // a person typing another namespace keeps "Other namespace…" chosen
    this.select.value = this.other.hidden ? namespace : OTHER;
    this.current = namespace;
    this.form.hidden = false;
  }

  hide() {
    this.form.hidden = true;
  }
}
