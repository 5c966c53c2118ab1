// The table's cells from the CRDs' printer columns (config.json): the value at a column's
// JSONPath, how it reads, how it sorts and what it matches. Pure functions.

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** The value at a printer column's `jsonPath` (".status.jobStatus"), or undefined. */
export function valueAt(object, jsonPath) {
  let value = object;
  for (const key of jsonPath.split(".").slice(1)) {
    if (value === null || typeof value !== "object") return undefined;
    value = value[key];
  }
  return value;
}

/** kubectl's age of a duration in milliseconds (apimachinery's HumanDuration). */
export function humanDuration(ms) {
  const seconds = Math.trunc(ms / 1000); // as Go's int(d.Seconds())
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  const years = Math.floor(hours / 24 / 365);
  if (years < 8) {
    const d = Math.floor(hours / 24) % 365;
    return d === 0 ? `${years}y` : `${years}y${d}d`;
  }
  return `${years}y`;
}

const SHORT = new Intl.DateTimeFormat(undefined, {
  year: "numeric", month: "2-digit", day: "2-digit",
  hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false,
});
const LONG = new Intl.DateTimeFormat(undefined, {
  dateStyle: "full", timeStyle: "long",
});

/** The exact time of `date` in the viewer's time zone, with UTC beside it (for a title). */
export function exactTime(date) {
  return `${LONG.format(date)} (${date.toISOString().replace(".000Z", "Z")})`;
}

/** A cell: `text` as shown, `title` (the exact time of a date, else ""; `iso` the time),
 * `key` to sort by
 * (null: no value; sorts last) for a column `type` ("date", "integer", "number", "boolean",
 * "string") at time `now` (ms). Strings holding a timestamp read as local times. */
export function cell(value, type, now) {
  if (value === undefined || value === null || value === "") {
    return { text: "", title: "", key: null };
  }
  if (type === "date" || (typeof value === "string" && TIMESTAMP.test(value))) {
    const date = new Date(value);
    if (Number.isNaN(date.getTime())) return { text: String(value), title: "", key: String(value) };
    const text = type === "date" ? humanDuration(now - date.getTime()) : SHORT.format(date);
    return { text, title: exactTime(date), key: date.getTime(), iso: date.toISOString() };
  }
  if (type === "integer" || type === "number") {
    const n = Number(value);
    return { text: String(value), title: "", key: Number.isNaN(n) ? String(value) : n };
  }
  if (type === "boolean") return { text: String(value), title: "", key: value ? 1 : 0 };
  const text = typeof value === "object" ? JSON.stringify(value) : String(value);
  return { text, title: "", key: text.toLowerCase() };
}

/** Natural order of strings; one collator for every comparison (`localeCompare` with
 * options builds one per call: sorting 1,000 rows took ~60 ms instead of ~3 ms). */
const NATURAL = new Intl.Collator(undefined, { numeric: true });

/** The order of two sort keys: numbers by value, strings naturally ("w2" before "w10"),
 * no value after every value. */
export function compareKeys(a, b) {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1;
  if (typeof a === "number" && typeof b === "number") return a - b;
  return NATURAL.compare(String(a), String(b));
}

/** The filter's words: lower case, split at white space. */
export function filterWords(filter) {
  return filter.toLowerCase().split(/\s+/).filter(Boolean);
}

/** Whether a row whose cells read `texts` matches every word of the filter. */
export function rowMatches(texts, words) {
  if (words.length === 0) return true;
  const haystack = texts.join("\u0000").toLowerCase();
  return words.every((word) => haystack.includes(word));
}

const TONES = [
  ["bad", /fail|error|unhealthy|invalid|backoff|crash/i],
  ["ok", /^(ready|running|succeeded|complete|healthy|true)$/i],
  ["busy", /pending|initializing|waiting|new|upgrad|suspend|starting|scheduling|retrying/i],
];

/** How a status reads at a glance: "ok", "bad", "busy" or "" (for a status column). */
export function tone(text) {
  for (const [name, pattern] of TONES) if (pattern.test(text)) return name;
  return "";
}
