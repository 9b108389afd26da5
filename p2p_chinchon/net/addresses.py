"""This machine's addresses, and the candidate addresses a seat offers in its join request
(docs/protocol.md "Lobby"): light, so ``join --connect`` loads no mDNS; the interface list
(``ifaddr``) is read only when asked for, so the address checks are sans-I/O."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

__all__ = ["advertised_ipv4", "candidate_addresses", "check_host", "local_addresses", "parse_advertise"]


def check_host(host: str, text: str) -> None:
    """Raise ``ValueError`` (naming ``text``, the whole address) unless ``host`` is an IP
    address or a name the system's lookup can take: printable, no space (other seats' screens
    show addresses: no terminal escapes) and encodable as IDNA as trio's ``getaddrinfo`` does
    ('x..y' is not: its UnicodeError is no OSError, so a dialler would not take it for a failed
    place)."""
    if any(not c.isprintable() or c.isspace() for c in host):
        raise ValueError(f"address {text!r}: a control character or a space")
    try:
        ipaddress.ip_address(host.partition("%")[0])
        return
    except ValueError:
        pass
    try:
        host.encode("idna")
    except UnicodeError:
        raise ValueError(f"address {text!r}: {host!r} is neither an IP address nor a host name") from None


def local_addresses(include_loopback: bool | None = None) -> list[str]:
    """This machine's IPv4 addresses (from ``ifaddr``). Loopback is excluded unless it is the
    only one (``include_loopback=None``) or asked for (True). Link-local 169.254/16 is kept
    last, as a last resort."""
    import ifaddr  # the one read of the machine here (it imports socket)

    found: list[ipaddress.IPv4Address] = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if isinstance(ip.ip, str):
                try:
                    addr = ipaddress.IPv4Address(ip.ip)
                except ValueError:
                    continue
                if addr not in found:
                    found.append(addr)
    others = [a for a in found if not a.is_loopback]
    loops = [a for a in found if a.is_loopback] or [ipaddress.IPv4Address("127.0.0.1")]
    if include_loopback is True:
        chosen = others + loops
    elif include_loopback is False:
        chosen = others
    else:
        chosen = others or loops
    chosen.sort(key=lambda a: a.is_link_local)
    return [str(a) for a in chosen]


def parse_advertise(text: str, default_port: int | None = None) -> tuple[str, int | None]:
    """``--advertise HOST[:PORT]`` (IPv6 as ``[HOST]:PORT`` or a bare address) -> (host, port or
    ``default_port``). Raises ``ValueError`` with a sentence a person can act on."""
    text = text.strip()
    host, port = text, default_port
    if text.startswith("["):
        inside, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ValueError(f"{text!r}: write an IPv6 address as [ADDRESS] or [ADDRESS]:PORT")
        host, rest = inside, rest[1:]
        if rest:
            port = _port(text, rest)
    elif text.count(":") == 1:
        host, rest = text.split(":")
        port = _port(text, rest)
    if not host or any(c.isspace() for c in host) or len(host.encode()) > 50:
        raise ValueError(f"{text!r} is not HOST or HOST:PORT (an address or a name of at most 50 bytes)")
    check_host(host, text)
    return host, port


def _port(text: str, port: str) -> int:
    if not (port.isascii() and port.isdigit()) or not 0 < int(port) < 65536:  # not Arabic-Indic digits
        raise ValueError(f"{text!r}: the port must be a number in 1..65535")
    return int(port)


def candidate_addresses(port: int, advertise: Iterable[str] = (), interfaces: Iterable[str] | None = None,
                        limit: int = 8) -> list[str]:
    """A seat's candidate addresses, ``"host:port"``, best first: each ``--advertise HOST[:PORT]``
    (its port, or ``port``), then this machine's non-loopback IPv4 ``interfaces`` (default
    :func:`local_addresses`) with ``port``; distinct, at most ``limit``. Raises ``ValueError``
    for a bad ``advertise`` entry."""
    out: list[str] = []
    for text in advertise:
        host, p = parse_advertise(text, port)
        out.append(f"[{host}]:{p}" if ":" in host else f"{host}:{p}")
    ips = local_addresses(include_loopback=False) if interfaces is None else list(interfaces)
    out += [f"{ip}:{port}" for ip in ips]
    return list(dict.fromkeys(out))[:limit]


def advertised_ipv4(advertise: Iterable[str], port: int) -> list[str]:
    """The IPv4 hosts of ``--advertise`` entries whose port is ``port`` (an mDNS seat record
    carries IPv4 addresses and one port); names, IPv6 and other ports are left out."""
    out = []
    for text in advertise:
        host, p = parse_advertise(text, port)
        try:
            ip = ipaddress.IPv4Address(host)
        except ValueError:
            continue
        if p == port and str(ip) not in out:
            out.append(str(ip))
    return out
