"""A table's lobby sockets, bound with the standard library before the rest of a command loads.

``host`` and ``play`` bind their lobby port first (joiners may connect at once: the kernel
queues them until the lobby accepts), then load trio, the table and the crypto while their
joiners start; :func:`~p2p_chinchon.net.session.host_game` takes the sockets over. Binding is
``trio.open_tcp_listeners``'s: one socket per address, ``SO_REUSEADDR``, IPv6 sockets v6-only.
"""

from __future__ import annotations

import errno
import socket
import sys

BACKLOG = 0xFFFF  # trio's default (the kernel caps it at somaxconn)


def open_listen_sockets(host: str | None, port: int) -> list[socket.socket]:
    """Listening TCP sockets for ``host:port`` (port 0: any free port). Raises OSError."""
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    socks: list[socket.socket] = []
    unsupported = False
    try:
        for family, type_, proto, _, sockaddr in found:
            try:
                sock = socket.socket(family, type_, proto)
            except OSError as exc:
                if exc.errno != errno.EAFNOSUPPORT:
                    raise
                unsupported = True  # e.g. an IPv6 address on an IPv4-only system
                continue
            try:
                if sys.platform != "win32":
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                if family == socket.AF_INET6:
                    sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                sock.bind(sockaddr)
                sock.listen(BACKLOG)
            except BaseException:
                sock.close()
                raise
            socks.append(sock)
    except BaseException:
        for sock in socks:
            sock.close()
        raise
    if not socks:
        raise OSError(errno.EAFNOSUPPORT if unsupported else errno.EADDRNOTAVAIL,
                      f"no socket could listen on {host}:{port}")
    return socks
