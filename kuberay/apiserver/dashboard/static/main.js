// The dashboard's entry: read config.json, then show the login page (caller mode without a
// token) or the lists, following the URL (pushState for a new namespace or kind, so Back
// works; replaceState for sort and filter).

import { Api, where } from "./api.js";
import { CreateView } from "./create-view.js";
import { attachDelete } from "./delete.js";
import { DetailView } from "./detail-view.js";
import { ListView } from "./list-view.js";
import { NamespacePicker } from "./namespace-picker.js";
import * as session from "./session.js";
import { DEFAULT_NAMESPACE, isNamespaceName, readState, writeState } from "./state.js";

const CALLER = "caller";

class App {
  constructor(config) {
    this.config = config;
    this.caller = config.authMode === CALLER;
    this.plurals = config.kinds.map((k) => k.plural);
    this.api = new Api(new URL("../", import.meta.url), config.apiVersion, () =>
      this.caller ? session.token() : null,
    );
    this.main = document.getElementById("main");
    this.sessionArea = document.getElementById("session");
    this.picker = new NamespacePicker(document.getElementById("namespace-form"), (namespace) =>
      this.navigate({ namespace, name: "" }, true),
    );
    this.list = null;
    this.detail = null;
    this.seen = new Set(session.knownNamespaces());
    this.seen.add(DEFAULT_NAMESPACE);
    window.addEventListener("popstate", () => this.route());
    // a page left for another document (or kept in the back/forward cache) ends its watches
    // itself: the browser may otherwise keep their connections open; shown again, it reads anew
    window.addEventListener("pagehide", () => this.leave());
    window.addEventListener("pageshow", (event) => {
      if (event.persisted) this.route();
    });
    document.addEventListener("keydown", (event) => this.shortcut(event));
  }

  state() {
    return readState(location.search, this.plurals);
  }

  /** Show what the URL says; the URL written out in full first (a link names its view). */
  route() {
    if (this.caller && !session.token()) {
      this.showLogin("");
      return;
    }
    const state = this.state();
    const canonical = writeState(state);
    if (location.search !== canonical) history.replaceState(null, "", canonical);
    if (state.create) this.showCreate(state);
    else if (state.name) this.showDetail(state);
    else this.showList(state);
  }

  /** End the shown page's watches and reads (the document is being left). */
  leave() {
    this.list?.destroy();
    this.list = null;
    this.detail?.destroy();
    this.detail = null;
  }

  navigate(changes, push) {
    const state = { ...this.state(), ...changes };
    const url = writeState(state);
    if (url !== location.search) {
      if (push) history.pushState(null, "", url);
      else history.replaceState(null, "", url);
    }
    this.route();
  }

  /** The New RayJob page (create-view.js). */
  showCreate(state) {
    this.list?.destroy();
    this.list = null;
    this.detail?.destroy();
    this.detail = new CreateView(this.main, this.api, {
      navigate: (changes, push) => this.navigate(changes, push),
      unauthorized: () => this.unauthorized(),
    });
    this.showSession();
    this.picker.set(state.namespace, this.seen);
    document.title = `New RayJob · ${where(state.namespace)} · KubeRay`;
    this.detail.show(state);
  }

  showDetail(state) {
    this.list?.destroy();
    this.list = null;
    this.detail?.destroy();
    this.detail = new DetailView(this.main, this.config, this.api, this.caller, {
      navigate: (changes, push) => this.navigate(changes, push),
      unauthorized: () => this.unauthorized(),
    });
    this.showSession();
    this.picker.set(state.namespace, this.seen);
    const kind = this.config.kinds.find((k) => k.plural === state.kind);
    document.title = `${kind.kind} ${state.name} · ${where(state.namespace)} · KubeRay`;
    this.detail.show(state);
    attachDelete(this.main.querySelector("[data-ref=delete]"), this.api, kind, state, {
      deleted: () => this.navigate({ name: "" }, true),
      unauthorized: () => this.unauthorized(),
    });
    this.main.focus();
  }

  showList(state) {
    if (this.detail) {
      this.detail.destroy();
      this.detail = null;
    }
    if (!this.list) {
      this.list = new ListView(this.main, this.config, this.api, {
        navigate: (changes, push) => this.navigate(changes, push),
        unauthorized: () => this.unauthorized(),
        sawNamespaces: (names) => this.saw(names),
      });
      this.showSession();
    }
    if (isNamespaceName(state.namespace)) this.saw([state.namespace]);
    this.picker.set(state.namespace, this.seen);
    const kind = this.config.kinds.find((k) => k.plural === state.kind);
    document.title = `${kind.kind}s · ${where(state.namespace)} · KubeRay`;
    this.list.show(state);
  }

  saw(names) {
    const fresh = [...names].filter((n) => n && !this.seen.has(n));
    if (fresh.length === 0) return;
    for (const name of fresh) this.seen.add(name);
    session.rememberNamespaces(fresh);
    const state = this.state();
    this.picker.set(state.namespace, this.seen);
  }

  showSession() {
    const text = document.createElement("span");
    if (!this.caller) {
      text.textContent = "Acting as the API server's service account";
      this.sessionArea.replaceChildren(text);
      return;
    }
    text.textContent = "Signed in with a bearer token";
    const out = document.createElement("button");
    out.type = "button";
    out.textContent = "Sign out";
    out.addEventListener("click", () => {
      session.clearToken();
      this.showLogin("Signed out.");
    });
    this.sessionArea.replaceChildren(text, out);
  }

  unauthorized() {
    session.clearToken();
    this.showLogin("The server refused the token (401 Unauthorized): it may have expired. Sign in again.");
  }

  showLogin(message) {
    this.list?.destroy();
    this.list = null;
    this.detail?.destroy();
    this.detail = null;
    this.picker.hide();
    this.sessionArea.replaceChildren();
    document.title = "Sign in · KubeRay";
    const page = document.getElementById("login-template").content.cloneNode(true);
    const form = page.querySelector("form");
    const input = page.querySelector("#token");
    const error = page.querySelector("[data-ref=error]");
    error.textContent = message;
    error.hidden = !message;
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      if (!session.setToken(input.value)) {
        error.textContent = "Paste a token first.";
        error.hidden = false;
        return;
      }
      input.value = "";
      this.route();
      this.main.focus();
    });
    this.main.replaceChildren(page);
    input.focus();
  }

  shortcut(event) {
    const target = event.target;
    const typing = target instanceof HTMLInputElement || target instanceof HTMLSelectElement || target instanceof HTMLTextAreaElement;
    if (event.key === "/" && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
      const filter = document.getElementById("filter");
      if (filter) {
        event.preventDefault();
        filter.focus();
      }
    }
  }
}

async function start() {
  const main = document.getElementById("main");
  let config;
  try {
    const response = await fetch(new URL("config.json", import.meta.url), { cache: "no-store" });
    if (!response.ok) throw new Error(`config.json: HTTP ${response.status}`);
    config = await response.json();
  } catch (error) {
    const p = document.createElement("p");
    p.className = "notice";
    p.textContent = `The dashboard cannot start: ${error.message}`;
    main.replaceChildren(p);
    return;
  }
  const app = new App(config);
  app.route();
}

start();
