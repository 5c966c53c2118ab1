"""``moto_server`` without a reverse DNS query for the address it listens on.

moto's server is werkzeug's, a :class:`http.server.HTTPServer`, whose ``server_bind`` names
itself with :func:`socket.getfqdn` of its address. For an address ``/etc/hosts`` does not
list (the real node's bridge, ``10.250.0.1``, or a loopback address other than
``127.0.0.1``) that is a PTR query to the machine's resolver: a packet leaving the machine,
once per start. Here a name or address is its own name and the host's name is
:func:`socket.gethostname` (no lookup); moto runs as ``moto_server`` would, with the same
arguments.

Run: ``python hack/cluster/moto_main.py -H HOST -p PORT`` (the interpreter that has moto).
"""

from __future__ import annotations

import socket
import sys


def local_fqdn(name: str = "") -> str:
    """:func:`socket.getfqdn` without DNS: a name or address is returned as given; no name
    (or a wildcard address) gives this host's name."""
    if not name or name in ("0.0.0.0", "::"):
        return socket.gethostname()
    return name


def main() -> None:
    """Start moto's server with this process's arguments."""
    socket.getfqdn = local_fqdn
    from moto.server import main as moto_main

    sys.argv[0] = "moto_server"
    moto_main(sys.argv[1:])


if __name__ == "__main__":
    main()
