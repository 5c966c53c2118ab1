// The caller's bearer token, kept in this tab's sessionStorage only (gone when the tab
// closes; never in a URL, a cookie or a log), and the namespaces this browser has seen
// (localStorage: names only, for the namespace selector).

const TOKEN_KEY = "kuberay-dashboard.token";
const NAMESPACES_KEY = "kuberay-dashboard.namespaces";
const MAX_NAMESPACES = 50;

export function token() {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

/** Keep `value` as the token: surrounding white space and a "Bearer " prefix dropped. */
export function setToken(value) {
  const cleaned = value.trim().replace(/^bearer\s+/i, "");
  sessionStorage.setItem(TOKEN_KEY, cleaned);
  return cleaned;
}

export function clearToken() {
  try {
    sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // storage unavailable: nothing kept
  }
}

/** The namespaces remembered, most recent first. */
export function knownNamespaces() {
  try {
    const names = JSON.parse(localStorage.getItem(NAMESPACES_KEY) || "[]");
    return Array.isArray(names) ? names.filter((n) => typeof n === "string") : [];
  } catch {
    return [];
  }
}

/** Remember `names` (most recent first), at most MAX_NAMESPACES. */
export function rememberNamespaces(names) {
  const merged = [...new Set([...names, ...knownNamespaces()])].slice(0, MAX_NAMESPACES);
  try {
    localStorage.setItem(NAMESPACES_KEY, JSON.stringify(merged));
  } catch {
    // storage unavailable: the selector shows what this page saw
  }
  return merged;
}
