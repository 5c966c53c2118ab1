// One collection kept up to date (a kind in a namespace, one object of it by a field
// selector, or the Events about an object): list, then watch from the list's
// resourceVersion (a streamed answer of JSON lines read with fetch). No polling.
//
// * A watch that ends (the apiserver closes it after a while) is opened again from the last
//   resourceVersion seen (bookmarks keep it fresh); one that ended at once backs off first.
// * 410 Gone (as the answer, or as an ERROR event): the version is too old; list again.
// * Other failures (network, 5xx) back off (0.5 s doubling to 30 s, with jitter) and try
//   again; a refusal (401, 403) stops and is reported: retrying cannot change it.

import { ApiError } from "./api.js";

const BACKOFF_START_MS = 500;
const BACKOFF_MAX_MS = 30000;
/** A watch that lived at least this long ended normally: no backoff before the next. */
const HEALTHY_WATCH_MS = 5000;

/** The wait before attempt `n` (1, 2, ...) of something that failed, with jitter. */
export function backoffDelay(n) {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_START_MS * 2 ** Math.max(0, n - 1));
  return base / 2 + Math.random() * (base / 2);
}

/** An object's key in the list: namespace/name. */
export function objectKey(object) {
  return `${object.metadata?.namespace || ""}/${object.metadata?.name || ""}`;
}

/** Apply one watch `event` to `items` (a Map by objectKey); the resourceVersion it brings,
 * "gone" for a 410, or throws the ApiError of another ERROR event. */
export function applyEvent(items, event) {
  const object = event.object || {};
  switch (event.type) {
    case "ADDED":
    case "MODIFIED":
      items.set(objectKey(object), object);
      break;
    case "DELETED":
      items.delete(objectKey(object));
      break;
    case "BOOKMARK":
      break;
    case "ERROR":
      if (object.code === 410) return "gone";
      throw new ApiError(object.code || 500, object, object.message || "watch error");
    default:
      return null;
  }
  return object.metadata?.resourceVersion || null;
}

const sleep = (ms, signal) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(timer); resolve(); }, { once: true });
  });

/** What a ListWatch follows: the objects of `plural` in `namespace` through `api` (those
 * matching `fieldSelector` when one is given, e.g. "metadata.name=NAME"). A source is any
 * object with `list(signal)` (to `{items, resourceVersion}`) and `watch(resourceVersion,
 * signal)` (to the streaming answer). */
export function collectionSource(api, plural, namespace, fieldSelector = "") {
  return {
    list: (signal) => api.list(plural, namespace, signal, fieldSelector),
    watch: (resourceVersion, signal) =>
      api.watch(plural, namespace, resourceVersion, signal, fieldSelector),
  };
}

/** Keeps `items` (a Map by objectKey) in step with `source` (see collectionSource).
 * Callbacks: `changed()` after the items changed, `status(state, detail)` with state
 * "loading", "live", "retrying" (detail: the error and the delay) or "stopped" (detail: the
 * error that stopped it; its `during` is "list" or "watch"). */
export class ListWatch {
  constructor(source, { changed, status }) {
    this.source = source;
    this.changed = changed;
    this.status = status;
    this.items = new Map();
    this.listed = false;
    this.resourceVersion = "";
    this.abort = new AbortController();
  }

  start() {
    this.run().catch((error) => this.status("stopped", error));
    return this;
  }

  stop() {
    this.abort.abort();
  }

  get stopped() {
    return this.abort.signal.aborted;
  }

  async run() {
    const signal = this.abort.signal;
    let needList = true;
    let failures = 0;
    this.status("loading");
    while (!this.stopped) {
      let during = needList ? "list" : "watch";
      try {
        if (needList) {
          const { items, resourceVersion } = await this.source.list(signal);
          this.items = new Map(items.map((object) => [objectKey(object), object]));
          this.resourceVersion = resourceVersion;
          this.listed = true;
          needList = false;
          this.changed();
        }
        during = "watch";
        const started = Date.now();
        const outcome = await this.watchOnce(signal);
        if (outcome === "gone") {
          needList = true;
          failures = 0;
          continue;
        }
        failures = Date.now() - started >= HEALTHY_WATCH_MS ? 0 : failures + 1;
      } catch (error) {
        if (this.stopped) return;
        if (error instanceof ApiError && error.status === 410) {
          needList = true;
          continue;
        }
        if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
          error.during = during;
          this.status("stopped", error);
          return;
        }
        failures += 1;
        const delay = backoffDelay(failures);
        this.status("retrying", { error, delay, during });
        await sleep(delay, signal);
        continue;
      }
      if (failures > 0) await sleep(backoffDelay(failures), signal);
    }
  }

  /** One watch: "gone" on a 410, "ended" when the stream ends. */
  async watchOnce(signal) {
    const response = await this.source.watch(this.resourceVersion, signal);
    this.status("live");
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return "ended";
        buffer += value;
        const lines = buffer.split("\n");
        buffer = lines.pop();
        let changed = false;
        for (const line of lines) {
          if (!line.trim()) continue;
          const event = JSON.parse(line);
          const version = applyEvent(this.items, event);
          if (version === "gone") return "gone";
          if (version) this.resourceVersion = version;
          changed ||= event.type !== "BOOKMARK";
        }
        if (changed) this.changed();
      }
    } finally {
      reader.cancel().catch(() => {});
    }
  }
}
