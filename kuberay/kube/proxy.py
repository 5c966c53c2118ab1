"""Which HTTP proxy a client dials the apiserver through, as client-go chooses it.

* The cluster's ``proxy-url`` wins (client-go ``http.ProxyURL``).
* Else the environment, read as Go's ``golang.org/x/net/http/httpproxy`` reads it
  (``FromEnvironment`` + ``useProxy``): ``HTTPS_PROXY``/``https_proxy`` for an https
  server, ``HTTP_PROXY``/``http_proxy`` for an http one (ignored when ``REQUEST_METHOD``
  is set: a CGI process), the upper-case name first; a value without a scheme is
  ``http://``. ``NO_PROXY``/``no_proxy`` is a comma list of entries, each one of:
  ``*`` (nothing is proxied); an IP or CIDR (``10.0.0.0/8``); an IP with a port
  (``10.1.2.3:6443``, ``[fd00::1]:6443``); a domain with an optional port, where
  ``example.com`` matches ``example.com`` and its subdomains, ``.example.com`` and
  ``*.example.com`` only its subdomains. A port in an entry must equal the server's
  port (the scheme's default when the URL names none).
* ``localhost`` and loopback addresses are never proxied (Go's ``useProxy`` returns
  false for them before reading ``NO_PROXY``).

Only ``http://`` proxies are supported (the connection pool speaks plain HTTP to its
proxy, with CONNECT for https servers); any other scheme is a :class:`ConfigError`.
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections.abc import Mapping

from kuberay.kube.errors import ConfigError


def proxy_for(server: str, proxy_url: object, environ: Mapping[str, str]) -> str | None:
    """The proxy URL to reach ``server`` through (None: dial directly), from the cluster's
    ``proxy_url`` or ``environ`` (see the module doc). Raises ConfigError for a proxy
    this client cannot use."""
    if proxy_url:
        return _checked(str(proxy_url), "proxy-url")
    parts = urllib.parse.urlsplit(server)
    https = parts.scheme == "https"
    if https:
        value = _first(environ, "HTTPS_PROXY", "https_proxy")
        name = "HTTPS_PROXY"
    elif environ.get("REQUEST_METHOD"):
        return None
    else:
        value = _first(environ, "HTTP_PROXY", "http_proxy")
        name = "HTTP_PROXY"
    if not value:
        return None
    host = (parts.hostname or "").lower()
    port = str(parts.port or (443 if https else 80))
    if not use_proxy(host, port, _first(environ, "NO_PROXY", "no_proxy")):
        return None
    return _checked(value if "://" in value else "http://" + value, name)


def use_proxy(host: str, port: str, no_proxy: str) -> bool:
    """Go's ``httpproxy`` ``useProxy``: False when ``host:port`` is loopback,
    ``localhost`` or matched by ``no_proxy``."""
    if not host:
        return True
    host = host.strip().lower().strip("[]")
    if host == "localhost":
        return False
    ip = _ip(host)
    if ip is not None and ip.is_loopback:
        return False
    return not any(_matches(entry, host, port, ip) for entry in no_proxy.split(","))


def _matches(
    raw: str, host: str, port: str, ip: ipaddress.IPv4Address | ipaddress.IPv6Address | None
) -> bool:
    entry = raw.strip().lower()
    if not entry:
        return False
    if entry == "*":
        return True
    if "/" in entry:  # a CIDR (a malformed one matches nothing)
        try:
            return ip is not None and ip in ipaddress.ip_network(entry, strict=False)
        except ValueError:
            return False
    phost, pport = _split_host_port(entry)
    if not phost:
        return False
    pip = _ip(phost)
    if pip is not None:
        return ip is not None and pip == ip and (not pport or pport == port)
    if phost.startswith("*."):
        phost = phost[1:]
    match_host = not phost.startswith(".")
    suffix = phost if phost.startswith(".") else "." + phost
    if host.endswith(suffix) or (match_host and host == suffix[1:]):
        return not pport or pport == port
    return False


def _split_host_port(entry: str) -> tuple[str, str]:
    """Go's ``net.SplitHostPort`` where it succeeds, else ``(entry, "")``."""
    if entry.startswith("["):
        end = entry.find("]")
        if end > 0 and entry[end + 1 : end + 2] == ":":
            return entry[1:end], entry[end + 2 :]
        return entry, ""
    if entry.count(":") == 1:
        host, port = entry.split(":")
        return host, port
    return entry, ""


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _first(environ: Mapping[str, str], *names: str) -> str:
    for name in names:
        if environ.get(name):
            return environ[name]
    return ""


def _checked(url: str, source: str) -> str:
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme != "http":
        raise ConfigError(
            f"{source} {url!r}: only http:// proxies are supported (not {scheme or 'this'}://)"
        )
    return url


__all__ = ["proxy_for", "use_proxy"]
