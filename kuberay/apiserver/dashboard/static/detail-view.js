// One object's page (?namespace=NS&kind=PLURAL&name=NAME): its printer columns, its
// status.conditions, its Events (through the events route), the Pods of its Ray cluster
// (through the API server's Pods route) and the way to its Ray dashboard.
//
// Live, no polling: read when opened (and on Refresh), then followed by watches
// (detail-follow.js): the object's own watch redraws its status, conditions and printer
// columns; when its status changes the Pods, the Why and the Ray dashboard link are read
// again. The Events follow a watch of the events route; where the caller may list Events
// but not watch them, they are read again whenever the object changes. A deleted object
// says so and shows nothing stale; one created again under the name is shown afresh.
// Leaving the page (destroy) ends every watch and read.

import { describeError, where } from "./api.js";
import { cell, tone, valueAt } from "./cells.js";
import { clusterNameOf, headServiceOf, portForwardHint, rayDashboardUrl } from "./links.js";
import { columnsOf, heading } from "./list-view.js";
import { loadHistory } from "./history-view.js";
import { driverLog } from "./log-view.js";
import { loadWhy } from "./why-view.js";
import { eventsSource, liveMark, objectChange, objectSource } from "./detail-follow.js";
import { ListWatch } from "./watch.js";

/** How often the ages shown (summary, Events, Pods) are redrawn: no request, only the clock. */
const AGE_REFRESH_MS = 10000;

/** The rows of `conditions` (status.conditions): type, status, reason, message, last
 * transition (a cell: local time, exact on hover), in the order the object lists them. */
export function conditionRows(conditions) {
  return (Array.isArray(conditions) ? conditions : []).map((c) => [
    cell(c.type, "string", 0), cell(c.status, "string", 0), cell(c.reason, "string", 0),
    cell(c.message, "string", 0), cell(c.lastTransitionTime, "string", 0),
  ]);
}

/** When `event` (events.k8s.io/v1) was last seen: its series' last time, its eventTime,
 * the deprecated last timestamp, or its creation. */
export function lastSeen(event) {
  return event.series?.lastObservedTime || event.eventTime || event.deprecatedLastTimestamp ||
    event.metadata?.creationTimestamp || "";
}

/** The Events of `events` that regard the object with `uid` (an Event naming another uid,
 * an older object of the same name, is left out), newest first, as rows: type, reason,
 * last seen (an age), count, reporter, note. */
export function eventRows(events, uid, now) {
  return events
    .filter((e) => !uid || !e.regarding?.uid || e.regarding.uid === uid)
    .map((e) => ({ event: e, at: Date.parse(lastSeen(e)) || 0 }))
    .sort((a, b) => b.at - a.at)
    .map(({ event: e }) => [
      cell(e.type, "string", now), cell(e.reason, "string", now),
      cell(lastSeen(e), "date", now),
      cell(e.series?.count ?? e.deprecatedCount ?? 1, "integer", now),
      cell(e.reportingController || e.deprecatedSource?.component, "string", now),
      cell(e.note, "string", now),
    ]);
}

/** The rows of `pods` (the Pods route's items): name, type, group, phase, ready
 * ("yes"/"no"), restarts, age (from creation), in the order given (by name). */
export function podRows(pods, now) {
  return pods.map((p) => [
    cell(p.name, "string", now), cell(p.nodeType, "string", now), cell(p.group, "string", now),
    cell(p.phase, "string", now), cell(p.ready ? "yes" : "no", "string", now),
    cell(p.restarts ?? 0, "integer", now), cell(p.creationTimestamp, "date", now),
  ]);
}

/** What a person reads when the Pods of `cluster` cannot be shown: a refused RayCluster
 * read names "get rayclusters", anything else "list pods". */
export function podsError(error, namespace) {
  const verb = error?.details?.kind === "rayclusters" ? "get" : "list";
  return describeError(error, verb, verb === "get" ? "rayclusters" : "pods", namespace);
}

function refs(root) {
  const found = {};
  for (const element of root.querySelectorAll("[data-ref]")) found[element.dataset.ref] = element;
  return found;
}

function cellElement(tag, value, pill) {
  const element = document.createElement(tag);
  if (pill && value.text) {
    const span = document.createElement("span");
    span.className = "pill";
    span.dataset.tone = tone(value.text);
    span.textContent = value.text;
    element.append(span);
  } else if (value.title) {
    const time = document.createElement("time");
    time.dateTime = value.iso;
    time.title = value.title;
    time.textContent = value.text;
    element.append(time);
  } else {
    element.textContent = value.text;
  }
  return element;
}

function rowsOf(rows, pillColumn) {
  return rows.map((cells) => {
    const tr = document.createElement("tr");
    cells.forEach((value, i) => tr.append(cellElement(i === 0 ? "th" : "td", value, i === pillColumn)));
    tr.firstChild.scope = "row";
    return tr;
  });
}

export class DetailView {
  /** `container` gets the page; `config` is config.json; `api` an Api; `caller` whether
   * the server acts as its caller; callbacks: `navigate(changes, push)`, `unauthorized()`. */
  constructor(container, config, api, caller, callbacks) {
    this.config = config;
    this.api = api;
    this.caller = caller;
    this.callbacks = callbacks;
    this.abort = null;
    this.reads = new Map();
    this.shown = null;
    const page = document.getElementById("detail-template").content.cloneNode(true);
    this.el = refs(page);
    container.replaceChildren(page);
    this.el.refresh.addEventListener("click", () => this.load());
    this.el.podsRefresh.addEventListener("click", () => this.loadPods(this.clusterName));
    this.el.back.addEventListener("click", (event) => {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      this.callbacks.navigate({ name: "" }, true);
    });
    // ages move on (an Event's "last seen"); not while a person is selecting text to copy
    this.timer = setInterval(() => {
      const selection = document.getSelection();
      if (selection && !selection.isCollapsed && container.contains(selection.anchorNode)) return;
      this.redrawAges();
    }, AGE_REFRESH_MS);
  }

  /** Redraw what shows an age from what was last read (nothing is asked again). */
  redrawAges() {
    if (!this.shown) return;
    this.renderSummary(this.shown);
    if (this.shownEvents) this.renderEvents(this.shownEvents);
    if (this.shownPods) this.renderPods(this.shownPods);
  }

  /** End every watch and read of this page (it is being left). */
  destroy() {
    clearInterval(this.timer);
    this.stop();
    this.log?.destroy();
  }

  stop() {
    this.abort?.abort();
    this.objectWatch?.stop();
    this.objectWatch = null;
    this.stopSections();
  }

  /** End what shows the object's parts: the Events' watch, the Pods, the other reads. */
  stopSections() {
    this.shownEvents = null;
    this.shownPods = null;
    this.eventsWatch?.stop();
    this.eventsWatch = null;
    this.podsAbort?.abort();
    for (const controller of this.reads.values()) controller.abort();
    this.reads.clear();
  }

  /** A signal for a new read of section `name`, the previous one's aborted. */
  signalFor(name) {
    this.reads.get(name)?.abort();
    const controller = new AbortController();
    this.reads.set(name, controller);
    return controller.signal;
  }

  /** Show the object `state` (from the URL) names. */
  show(state) {
    this.state = state;
    this.kind = this.config.kinds.find((k) => k.plural === state.kind);
    const list = new URLSearchParams({ namespace: state.namespace, kind: state.kind });
    this.el.back.href = `?${list}`;
    this.el.back.textContent = `← ${this.kind.kind}s in ${where(state.namespace)}`;
    this.el.heading.textContent = `${this.kind.kind} ${state.name}`;
    this.load();
  }

  /** Read the object, show it, then follow it. */
  async load() {
    this.stop();
    const abort = new AbortController();
    this.abort = abort;
    this.shown = null;
    const { namespace, kind: plural, name } = this.state;
    this.setLive("loading", "Loading…", "");
    let object;
    try {
      object = await this.api.object(plural, namespace, name, abort.signal);
    } catch (error) {
      if (abort.signal.aborted) return;
      if (error?.status === 401) {
        this.callbacks.unauthorized();
        return;
      }
      const { title, detail } = error?.status === 404
        ? { title: `There is no ${this.kind.kind} ${name} in ${where(namespace)}.`, detail: error.message }
        : describeError(error, "get", plural, namespace);
      this.showNotice(title, detail);
      this.el.content.hidden = true;
      this.setLive("", "", "");
      if (error?.status === 404) await this.loadHistory(abort.signal); // a deleted one's history
      else this.el.history.hidden = true;
      return;
    }
    this.render(object);
    this.setLive("read", `Read at ${this.readAt}`, "");
    const watch = new ListWatch(objectSource(this.api, plural, namespace, name), {
      changed: () => this.objectChanged(watch),
      status: (phase, detail) => this.objectStatus(watch, phase, detail),
    });
    this.objectWatch = watch.start();
  }

  setLive(phase, text, title) {
    this.el.live.dataset.phase = phase;
    this.el.live.textContent = text;
    this.el.live.title = title;
  }

  /** Show all of `object` (just read, or a new one of the name): every section read anew. */
  render(object) {
    this.stopSections();
    const { namespace, kind: plural, name } = this.state;
    this.shown = object;
    this.readAt = new Date().toLocaleTimeString();
    this.el.notice.hidden = true;
    this.el.content.hidden = false;
    this.el.delete.hidden = false;
    this.renderSummary(object);
    this.renderConditions(object);
    this.clusterName = clusterNameOf(this.kind.kind, object);
    this.log?.destroy();
    this.el.log.hidden = true;
    this.log = this.kind.kind === "RayJob" ? driverLog(this.el.log, this.api, namespace, name) : null;
    this.followEvents();
    this.renderLinks(object, this.signalFor("links"));
    this.loadPods(this.clusterName);
    loadWhy(this.el.why, this.api, namespace, plural, name, this.signalFor("why"));
    this.loadHistory(this.signalFor("history"));
  }

  /** The object's watch saw a change: apply it (see objectChange). */
  objectChanged(watch) {
    if (watch !== this.objectWatch || !watch.listed) return;
    const { namespace, name } = this.state;
    const next = watch.items.get(`${namespace}/${name}`) || null;
    const change = objectChange(this.shown, next);
    if (change === "deleted") this.showDeleted();
    else if (change === "appeared" || change === "replaced") this.render(next);
    else if (change === "status" || change === "changed") this.update(next, change === "status");
  }

  /** Redraw the parts of `object` (the one shown, changed) that came with it; when its
   * `statusChanged`, read again what follows from its status. */
  update(object, statusChanged) {
    const { namespace, kind: plural, name } = this.state;
    this.shown = object;
    this.readAt = new Date().toLocaleTimeString();
    this.renderSummary(object);
    this.renderConditions(object);
    const cluster = clusterNameOf(this.kind.kind, object);
    if (statusChanged || cluster !== this.clusterName) {
      this.clusterName = cluster;
      this.renderLinks(object, this.signalFor("links"));
      this.loadPods(cluster);
      loadWhy(this.el.why, this.api, namespace, plural, name, this.signalFor("why"));
      this.log?.load(); // a RayJob's new state (submitted, finished): its log has moved on
    }
    if (this.eventsReread) this.readEvents();
  }

  /** The object is gone: say so, show none of what it was (its history stays). */
  showDeleted() {
    const { namespace, name } = this.state;
    this.stopSections();
    this.log?.destroy();
    this.log = null;
    this.shown = null;
    this.el.content.hidden = true;
    this.el.delete.hidden = true;
    const at = new Date().toLocaleTimeString();
    this.showNotice(
      `${this.kind.kind} ${name} was deleted (seen at ${at}).`,
      `It is no longer in ${where(namespace)}; the page shows it again if one of that name is created.`,
    );
    this.loadHistory(this.signalFor("history"));
  }

  objectStatus(watch, phase, detail) {
    if (watch !== this.objectWatch) return;
    if (phase === "stopped" && detail?.status === 401) {
      this.callbacks.unauthorized();
      return;
    }
    const { kind: plural, namespace } = this.state;
    const mark = liveMark(phase, detail, this.readAt, plural, namespace);
    if (mark) this.setLive(phase, mark.text, mark.title);
  }

  /** The History section (when the server has a history server): this object's sessions. */
  async loadHistory(signal) {
    if (!this.config.historyServer) return;
    const { namespace, kind: plural, name } = this.state;
    await loadHistory(this.el.history, this.api, namespace, plural, name, signal);
  }

  /** The Pods table of RayCluster `cluster` ("" while the object has none: hidden). */
  async loadPods(cluster) {
    this.podsAbort?.abort();
    const abort = new AbortController();
    this.podsAbort = abort;
    this.el.pods.hidden = !cluster;
    if (!cluster) {
      this.shownPods = null;
      return;
    }
    const { namespace } = this.state;
    this.el.podsTitle.textContent = `Pods of ${cluster}`;
    let pods;
    try {
      pods = await this.api.pods(namespace, cluster, abort.signal);
    } catch (error) {
      if (abort.signal.aborted) return;
      const { title, detail } = podsError(error, namespace);
      this.shownPods = null;
      this.el.podsNotice.textContent = `${title} ${detail}`.trim();
      this.el.podsNotice.hidden = false;
      this.el.podsWrap.hidden = true;
      this.el.noPods.hidden = true;
      return;
    }
    if (abort.signal.aborted) return;
    this.renderPods(pods);
  }

  renderPods(pods) {
    this.shownPods = pods;
    const rows = podRows(pods, Date.now());
    this.el.podsNotice.hidden = true;
    this.el.podRows.replaceChildren(...rowsOf(rows, 3));
    this.el.podsWrap.hidden = rows.length === 0;
    this.el.noPods.hidden = rows.length > 0;
  }

  showNotice(title, detail) {
    this.el.noticeTitle.textContent = title;
    this.el.noticeDetail.textContent = detail || "";
    this.el.notice.hidden = false;
  }

  renderSummary(object) {
    const now = Date.now();
    const items = [];
    for (const column of columnsOf(this.kind, this.state.namespace)) {
      if (column.id === "name") continue;
      const value = cell(valueAt(object, column.jsonPath), column.type, now);
      const dt = document.createElement("dt");
      dt.textContent = heading(column.name);
      const dd = cellElement("dd", value.text ? value : { text: "—", title: "" }, column.name.endsWith("status"));
      items.push(dt, dd);
    }
    this.el.summary.replaceChildren(...items);
  }

  renderConditions(object) {
    const rows = conditionRows(object.status?.conditions);
    this.el.conditions.replaceChildren(...rowsOf(rows, 1));
    this.el.conditionsWrap.hidden = rows.length === 0;
    this.el.noConditions.hidden = rows.length > 0;
  }

  /** Follow the Events about the object: a watch of the events route; where the watch is
   * refused but the list is not, they are read again whenever the object changes. */
  followEvents() {
    const { namespace, name } = this.state;
    this.eventsReread = false;
    const watch = new ListWatch(eventsSource(this.api, namespace, this.kind.kind, name), {
      changed: () => {
        if (watch === this.eventsWatch) this.renderEvents([...watch.items.values()]);
      },
      status: (phase, detail) => {
        if (watch !== this.eventsWatch || phase !== "stopped") return;
        if (detail?.during === "watch" && watch.listed) this.eventsReread = true;
        else this.showEventsError(detail);
      },
    });
    this.eventsWatch = watch.start();
  }

  /** Read the Events once (their watch refused): on each change of the object. */
  async readEvents() {
    const { namespace, name } = this.state;
    const signal = this.signalFor("events");
    let events;
    try {
      events = (await this.api.events(namespace, this.kind.kind, name, signal)).items;
    } catch (error) {
      if (!signal.aborted) this.showEventsError(error);
      return;
    }
    if (!signal.aborted) this.renderEvents(events);
  }

  showEventsError(error) {
    if (error?.status === 401) {
      this.callbacks.unauthorized();
      return;
    }
    this.shownEvents = null;
    this.el.eventsNotice.textContent = describeError(error, "list", "events", this.state.namespace).title;
    this.el.eventsNotice.hidden = false;
    this.el.eventsWrap.hidden = true;
    this.el.noEvents.hidden = true;
  }

  renderEvents(events) {
    this.shownEvents = events;
    const rows = eventRows(events, this.shown?.metadata?.uid, Date.now());
    this.el.eventsNotice.hidden = true;
    this.el.events.replaceChildren(...rowsOf(rows, -1));
    this.el.eventsWrap.hidden = rows.length === 0;
    this.el.noEvents.hidden = rows.length > 0;
  }

  /** The Ray dashboard's link (service-account mode) or the commands reaching it (caller
   * mode), while the cluster has a head Service. */
  async renderLinks(object, signal) {
    const { namespace } = this.state;
    const clusterName = clusterNameOf(this.kind.kind, object);
    let cluster = this.kind.kind === "RayCluster" ? object : null;
    if (!cluster && clusterName) {
      try {
        cluster = await this.api.object("rayclusters", namespace, clusterName, signal);
      } catch {
        cluster = null; // gone, or not ours to read: no link
      }
    }
    if (signal.aborted) return;
    const service = headServiceOf(cluster);
    const parts = [];
    if (service && !this.caller) {
      const link = document.createElement("a");
      link.href = rayDashboardUrl(this.api.root, namespace, service).href;
      link.textContent = `Ray dashboard of ${clusterName}`;
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      parts.push(link);
    } else if (service) {
      const p = document.createElement("p");
      p.className = "hint";
      p.textContent = `Ray dashboard of ${clusterName} (a browser link cannot carry your token): run`;
      const commands = portForwardHint(namespace, clusterName, service).map((text) => {
        const code = document.createElement("code");
        code.textContent = text;
        return code;
      });
      const or = document.createTextNode(" or ");
      p.append(" ", commands[0], or, commands[1], " and open http://127.0.0.1:8265/.");
      parts.push(p);
    }
    this.el.links.replaceChildren(...parts);
  }
}
