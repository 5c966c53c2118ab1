// The list page: one tab per kind, a filter, and a table with the columns kubectl get
// prints, kept live by a ListWatch. Sort and filter live in the URL (replaceState), so a
// view can be linked; the namespace and kind come from it.

import { describeError, where } from "./api.js";
import { cell, compareKeys, filterWords, rowMatches, tone, valueAt } from "./cells.js";
import { ALL_NAMESPACES, CREATABLE, isNamespaceName, sameList } from "./state.js";
import { ListWatch, collectionSource } from "./watch.js";

/** Seconds between refreshes of the ages shown. */
const AGE_REFRESH_MS = 10000;
/** Rows shown in the first frame of a new list (more than a tall window holds); the rest
 * follow in the next frame. Laying out a table costs about the same per row (1,000 rows:
 * a few hundred ms on a busy 2-core machine), so the window fills at once instead. */
export const FIRST_ROWS = 100;

const NAMESPACE_COLUMN = { id: "namespace", name: "namespace", jsonPath: ".metadata.namespace", type: "string" };
const NAME_COLUMN = { id: "name", name: "name", jsonPath: ".metadata.name", type: "string" };

/** The columns of `kind` (config.json's entry) in `namespace`: NAMESPACE (all namespaces
 * only), NAME, then the CRD's printer columns that `kubectl get` shows (priority 0). */
export function columnsOf(kind, namespace) {
  const printed = kind.columns
    .filter((c) => !c.priority)
    .map((c) => ({ id: c.name, name: c.name, jsonPath: c.jsonPath, type: c.type }));
  const first = namespace === ALL_NAMESPACES ? [NAMESPACE_COLUMN, NAME_COLUMN] : [NAME_COLUMN];
  return [...first, ...printed];
}

/** A column's heading: its name with a capital first letter, CPUs, GPUs and TPUs spelled
 * so ("desired workers" -> "Desired workers", "cpus" -> "CPUs"). */
export function heading(name) {
  const spelled = name.replace(/\b([ctg]pu)s\b/gi, (_, unit) => `${unit.toUpperCase()}s`);
  return spelled.charAt(0).toUpperCase() + spelled.slice(1);
}

/** The rows of `objects` for `columns` at `now`, filtered by `filter`, sorted by column
 * `sort` (falls back to the name) in `dir`, ties by namespace and name. */
export function tableRows(objects, columns, { sort, dir, filter }, now) {
  const words = filterWords(filter);
  const rows = [];
  for (const object of objects) {
    const cells = columns.map((c) => {
      const value = cell(valueAt(object, c.jsonPath), c.type, now);
      // a date column reads as an age: ascending is youngest first
      if (c.type === "date" && typeof value.key === "number") value.key = -value.key;
      return value;
    });
    if (rowMatches(cells.map((c) => c.text), words)) rows.push({ object, cells });
  }
  let index = columns.findIndex((c) => c.id === sort);
  if (index < 0) index = columns.findIndex((c) => c.id === "name");
  const sign = dir === "desc" ? -1 : 1;
  const nameIndex = columns.findIndex((c) => c.id === "name");
  const nsIndex = columns.findIndex((c) => c.id === "namespace");
  rows.sort(
    (a, b) =>
      sign * compareKeys(a.cells[index].key, b.cells[index].key) ||
      (nsIndex >= 0 ? compareKeys(a.cells[nsIndex].key, b.cells[nsIndex].key) : 0) ||
      compareKeys(a.cells[nameIndex].key, b.cells[nameIndex].key),
  );
  return rows;
}

/** The query of `object`'s detail page (its namespace, the list's `plural`, its name). */
export function detailQuery(object, plural) {
  const meta = object.metadata || {};
  return new URLSearchParams({ namespace: meta.namespace || "", kind: plural, name: meta.name || "" });
}

function refs(root) {
  const found = {};
  for (const element of root.querySelectorAll("[data-ref]")) found[element.dataset.ref] = element;
  return found;
}

export class ListView {
  /** `container` gets the page; `config` is config.json; `api` an Api; callbacks:
   * `navigate(changes, push)`, `unauthorized()`, `sawNamespaces(names)`. */
  constructor(container, config, api, callbacks) {
    this.config = config;
    this.api = api;
    this.callbacks = callbacks;
    this.state = null;
    this.watch = null;
    this.frame = 0;
    this.rowObjects = []; // the object of each row of the table body, in order
    this.complete = false;
    const page = document.getElementById("list-template").content.cloneNode(true);
    this.el = refs(page);
    container.replaceChildren(page);
    this.el.body.addEventListener("click", (event) => this.clickRow(event));
    this.buildTabs();
    this.el.create.addEventListener("click", (event) => {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      this.callbacks.navigate({ create: true }, true);
    });
    this.el.filter.addEventListener("input", () =>
      this.callbacks.navigate({ filter: this.el.filter.value }, false),
    );
    this.el.filter.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && this.el.filter.value) {
        this.el.filter.value = "";
        this.callbacks.navigate({ filter: "" }, false);
      }
    });
    // ages move on; not while a person is selecting text in the table (to copy a name)
    this.timer = setInterval(() => {
      const selection = document.getSelection();
      if (selection && !selection.isCollapsed && this.el.body.contains(selection.anchorNode)) return;
      this.schedule();
    }, AGE_REFRESH_MS);
  }

  destroy() {
    clearInterval(this.timer);
    cancelAnimationFrame(this.frame);
    this.watch?.stop();
  }

  kind(plural) {
    return this.config.kinds.find((k) => k.plural === plural);
  }

  buildTabs() {
    const links = this.config.kinds.map((kind) => {
      const link = document.createElement("a");
      link.textContent = `${kind.kind}s`;
      link.dataset.kind = kind.plural;
      link.addEventListener("click", (event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
        event.preventDefault();
        this.callbacks.navigate({ kind: kind.plural }, true);
      });
      return link;
    });
    this.el.tabs.replaceChildren(...links);
  }

  /** Show `state` (from the URL): a new list when the namespace or kind changed. */
  show(state) {
    const previous = this.state;
    this.state = state;
    const kind = this.kind(state.kind);
    this.columns = columnsOf(kind, state.namespace);
    for (const link of this.el.tabs.children) {
      const query = new URLSearchParams({ namespace: state.namespace, kind: link.dataset.kind });
      link.href = `?${query}`;
      if (link.dataset.kind === state.kind) link.setAttribute("aria-current", "page");
      else link.removeAttribute("aria-current");
    }
    if (this.el.filter.value !== state.filter) this.el.filter.value = state.filter;
    this.el.heading.textContent = `${kind.kind}s in ${where(state.namespace)}`;
    this.el.create.hidden = state.kind !== CREATABLE;
    this.el.create.href = `?${new URLSearchParams({ namespace: state.namespace, kind: CREATABLE, new: "1" })}`;
    this.buildHead();
    if (!sameList(previous, state)) this.relist(state);
    this.schedule();
  }

  relist(state) {
    this.watch?.stop();
    this.watch = null;
    this.hideNotice();
    this.el.body.replaceChildren();
    this.rowObjects = [];
    this.complete = false; // the new list's first render shows FIRST_ROWS only
    this.el.empty.hidden = true;
    if (state.namespace !== ALL_NAMESPACES && !isNamespaceName(state.namespace)) {
      this.showNotice(`“${state.namespace}” is not a namespace name.`, "Namespace names are lower-case letters, digits and dashes (at most 63).");
      this.el.wrap.hidden = true;
      return;
    }
    const watch = new ListWatch(collectionSource(this.api, state.kind, state.namespace), {
      changed: () => this.changed(watch),
      status: (phase, detail) => this.watchStatus(watch, phase, detail),
    });
    this.watch = watch.start();
  }

  changed(watch) {
    if (watch !== this.watch) return;
    if (this.state.namespace === ALL_NAMESPACES) {
      this.callbacks.sawNamespaces(new Set([...watch.items.values()].map((o) => o.metadata?.namespace)));
    }
    this.schedule();
  }

  watchStatus(watch, phase, detail) {
    if (watch !== this.watch) return;
    const live = this.el.live;
    live.dataset.phase = phase;
    const { kind, namespace } = this.state;
    if (phase === "loading") {
      live.textContent = "Loading…";
      this.el.table.setAttribute("aria-busy", "true");
    } else if (phase === "live") {
      live.textContent = "Live";
      live.title = "Changes appear as they happen (a Kubernetes watch).";
      this.hideNotice();
      this.el.table.removeAttribute("aria-busy");
      this.schedule();
    } else if (phase === "retrying") {
      const { title } = describeError(detail.error, detail.during, kind, namespace);
      live.textContent = `Reconnecting in ${Math.ceil(detail.delay / 1000)} s`;
      live.title = title;
      if (!watch.listed) this.showNotice(title, "Trying again…");
    } else if (phase === "stopped") {
      if (detail?.status === 401) {
        this.callbacks.unauthorized();
        return;
      }
      const verb = detail?.during || "list";
      const { title, detail: more } = describeError(detail, verb, kind, namespace);
      this.el.table.removeAttribute("aria-busy");
      if (verb === "list" || !watch.listed) {
        this.el.wrap.hidden = true;
        this.el.empty.hidden = true;
        this.showNotice(title, more);
        live.textContent = "";
      } else {
        live.textContent = "Not live";
        live.title = title;
        this.showNotice(`Not live: ${title}`, "The table shows the objects as they were listed.");
      }
    }
  }

  showNotice(title, detail) {
    this.el.noticeTitle.textContent = title;
    this.el.noticeDetail.textContent = detail || "";
    this.el.notice.hidden = false;
  }

  hideNotice() {
    this.el.notice.hidden = true;
  }

  buildHead() {
    const { sort, dir } = this.state;
    const sortId = this.columns.some((c) => c.id === sort) ? sort : "name";
    const cells = this.columns.map((column) => {
      const th = document.createElement("th");
      th.scope = "col";
      th.dataset.type = column.type;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      button.dataset.column = column.id;
      const label = document.createElement("span");
      label.textContent = heading(column.name);
      const arrow = document.createElement("span");
      arrow.className = "arrow";
      arrow.setAttribute("aria-hidden", "true");
      button.append(label, arrow);
      if (column.id === sortId) {
        th.setAttribute("aria-sort", dir === "desc" ? "descending" : "ascending");
        arrow.textContent = dir === "desc" ? "▼" : "▲";
      } else {
        th.setAttribute("aria-sort", "none");
      }
      button.addEventListener("click", () => {
        const again = column.id === sortId;
        this.callbacks.navigate({ sort: column.id, dir: again && dir === "asc" ? "desc" : "asc" }, false);
        // the header was built anew: keep the keyboard on this column's button
        [...this.el.head.querySelectorAll("button")].find((b) => b.dataset.column === column.id)?.focus();
      });
      th.append(button);
      return th;
    });
    this.el.head.replaceChildren(...cells);
  }

  /** Go to `object`'s detail page (a history entry: Back returns to this list). */
  open(object) {
    const meta = object.metadata || {};
    this.callbacks.navigate({ namespace: meta.namespace || this.state.namespace, name: meta.name }, true);
  }

  schedule() {
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  /** A click in the table: on a name's link (a plain left click; with a modifier the
   * browser follows the link itself) or anywhere else in a row (not while text in it is
   * being selected to copy) opens the row's object. One listener for every row. */
  clickRow(event) {
    const tr = event.target.closest("tr");
    const object = tr && tr.parentElement === this.el.body ? this.rowObjects[tr.sectionRowIndex] : null;
    if (!object) return;
    if (event.target.closest("a")) {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      this.open(object);
      return;
    }
    const selection = document.getSelection();
    if (selection && !selection.isCollapsed) return;
    this.open(object);
  }

  /** The row of one object: its cells built detached, so the table is laid out once. */
  buildRow(row) {
    const tr = document.createElement("tr");
    row.cells.forEach((value, i) => {
      const column = this.columns[i];
      const td = document.createElement(column.id === "name" ? "th" : "td");
      if (column.id === "name") td.scope = "row";
      td.dataset.type = column.type;
      if (column.name.endsWith("status") && value.text) {
        const pill = document.createElement("span");
        pill.className = "pill";
        pill.dataset.tone = tone(value.text);
        pill.textContent = value.text;
        td.append(pill);
      } else if (column.id === "name") {
        const link = document.createElement("a");
        link.href = `?${detailQuery(row.object, this.state.kind)}`;
        link.textContent = value.text;
        td.append(link);
      } else if (value.title) {
        const time = document.createElement("time");
        time.dateTime = value.iso;
        time.title = value.title;
        time.textContent = value.text;
        td.append(time);
      } else {
        td.textContent = value.text;
      }
      tr.append(td);
    });
    return tr;
  }

  render() {
    const watch = this.watch;
    if (!watch || !watch.listed) return;
    const kind = this.kind(this.state.kind);
    const rows = tableRows(watch.items.values(), this.columns, this.state, Date.now());
    // a new list: the first rows now, all of them once this frame is painted (later renders
    // replace every row at once, so a scrolled table never shrinks for a frame)
    const partial = !this.complete && rows.length > FIRST_ROWS;
    this.complete = true;
    const shown = partial ? rows.slice(0, FIRST_ROWS) : rows;
    const body = document.createDocumentFragment();
    for (const row of shown) body.append(this.buildRow(row));
    this.rowObjects = shown.map((row) => row.object);
    this.el.body.replaceChildren(body);
    if (partial) this.schedule();
    const total = watch.items.size;
    const noun = `${kind.kind}${total === 1 ? "" : "s"}`;
    const place = where(this.state.namespace);
    this.el.count.textContent =
      rows.length === total ? `${total} ${noun}` : `${rows.length} of ${total} ${noun} match`;
    this.el.caption.textContent = `${kind.kind}s in ${place}`;
    const empty = rows.length === 0;
    this.el.empty.hidden = !empty;
    this.el.wrap.hidden = empty;
    if (empty) {
      this.el.empty.textContent = total === 0 ? `No ${kind.kind}s in ${place}.` : `No ${kind.kind} matches “${this.state.filter}”.`;
    }
  }
}
