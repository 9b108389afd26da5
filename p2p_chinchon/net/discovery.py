"""Table discovery on the LAN by mDNS/DNS-SD (zeroconf), service type ``_chinchon._tcp.local.``.

An advertised table is one DNS-SD instance:

* instance label: ``"<table name> [<fingerprint, first 19 chars>]"``, at most 63 bytes of UTF-8 (the
  name is shortened, never the fingerprint part, so two hosts with the same table name do not
  collide and zeroconf does not have to rename);
* SRV: port of the host's lobby listener, server ``chinchon-<fp>-<port>.local.``;
* A records: the addresses given, or every non-loopback IPv4 address of the machine (from
  ``ifaddr``), or 127.0.0.1 if there is no other;
* TXT (each ``key=value`` at most 255 bytes): ``v`` protocol version, ``name`` table name,
  ``preset`` rules preset, ``seats`` ``"taken/max"``, ``fp`` host key fingerprint.

Threading: the sync ``Zeroconf(use_asyncio=False)`` is created and driven only from worker
threads (``trio.to_thread.run_sync``); browser callbacks run on zeroconf's threads and are
forwarded with ``TrioToken.run_sync_soon``. So this module runs under plain ``trio.run`` and
under trio guest mode on an asyncio loop (creating a sync ``Zeroconf`` on the asyncio thread
would attach to that loop and block it). Only IPv4 is used.

Gotchas handled: registration probes for about 1.7 s (``advertise`` returns after that);
``browser.cancel()`` and ``zc.close()`` on exit, even when cancelled, and never an error out of
them (a blocked zeroconf loop costs the goodbyes, not the caller).
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import math
import re
import unicodedata
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any

import trio
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from zeroconf import InterfaceChoice, IPVersion, ServiceBrowser, ServiceInfo, ServiceStateChange, Zeroconf

from p2p_chinchon import PROTOCOL_VERSION as _PROTOCOL_VERSION
from p2p_chinchon.net.addresses import local_addresses

__all__ = [
    "PROTOCOL_VERSION",
    "SERVICE_TYPE",
    "Advertisement",
    "TableAd",
    "TableBrowser",
    "TableInfo",
    "advertise",
    "browse",
    "browse_tables",
    "SEAT_SERVICE_TYPE",
    "SeatLocator",
    "advertise_seat",
    "local_addresses",
    "seat_service_info",
    "service_info",
    "table_info_from_service",
]

log = logging.getLogger(__name__)

SERVICE_TYPE = "_chinchon._tcp.local."
PROTOCOL_VERSION = _PROTOCOL_VERSION  # announced in the TXT record: the envelope version
MAX_LABEL = 63  # DNS label limit, bytes
MAX_TXT_ENTRY = 255  # one TXT string, bytes
MAX_TABLE_NAME = 64  # characters
_FP_IN_LABEL = 19  # fingerprint characters in the instance label ("MZXW-6YTB-OI3D-EMRT")
_PRESET_RE = re.compile(r"[A-Za-z0-9_.-]{1,32}")
_FP_RE = re.compile(r"[A-Za-z0-9-]{4,64}")


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not 1 <= len(name) <= MAX_TABLE_NAME:
        raise ValueError(f"table name must be 1..{MAX_TABLE_NAME} characters")
    if len(name.encode()) > MAX_TXT_ENTRY - len(b"name="):
        raise ValueError("table name is over 250 bytes of UTF-8 (TXT entry limit)")
    if any(unicodedata.category(c).startswith("C") for c in name):
        raise ValueError("table name contains control characters")
    return name


@dataclass(frozen=True, slots=True)
class TableAd:
    """What a host advertises. Raises ``ValueError`` on construction if a field is out of range:
    name 1..64 characters (at most 250 bytes of UTF-8) without control characters, preset ``[A-Za-z0-9_.-]{1,32}``,
    ``0 <= seats_taken <= max_seats <= 255``, ``max_seats >= 1``, fingerprint
    ``[A-Za-z0-9-]{4,64}`` (e.g. :func:`p2p_chinchon.identity.fingerprint`), version 0..65535."""

    name: str
    preset: str
    seats_taken: int
    max_seats: int
    fingerprint: str
    version: int = PROTOCOL_VERSION
    reach: tuple[str, ...] = ()  # host --advertise: more "host:port" of the lobby (TXT "addrs")

    def __post_init__(self) -> None:
        _check_name(self.name)
        if not isinstance(self.preset, str) or not _PRESET_RE.fullmatch(self.preset):
            raise ValueError(f"preset {self.preset!r} must match [A-Za-z0-9_.-]{{1,32}}")
        for f in ("seats_taken", "max_seats", "version"):
            v = getattr(self, f)
            if type(v) is not int:
                raise ValueError(f"{f} must be an int")
        if not 1 <= self.max_seats <= 255 or not 0 <= self.seats_taken <= self.max_seats:
            raise ValueError(f"seats {self.seats_taken}/{self.max_seats} out of range")
        if not 0 <= self.version <= 0xFFFF:
            raise ValueError("version must be in 0..65535")
        if not isinstance(self.fingerprint, str) or not _FP_RE.fullmatch(self.fingerprint):
            raise ValueError("fingerprint must match [A-Za-z0-9-]{4,64}")

    def txt(self) -> dict[bytes, bytes]:
        """TXT properties; every ``key=value`` fits in 255 bytes by the field limits."""
        props = {
            b"v": str(self.version).encode(),
            b"name": self.name.encode(),
            b"preset": self.preset.encode(),
            b"seats": f"{self.seats_taken}/{self.max_seats}".encode(),
            b"fp": self.fingerprint.encode(),
        }
        reach = ""
        for a in self.reach:  # as many as fit in one TXT entry
            more = f"{reach},{a}" if reach else a
            if len(b"addrs=") + len(more.encode()) > MAX_TXT_ENTRY:
                break
            reach = more
        if reach:
            props[b"addrs"] = reach.encode()
        for k, v in props.items():
            assert len(k) + 1 + len(v) <= MAX_TXT_ENTRY, k
        return props

    def instance_label(self) -> str:
        """``"name [first 19 chars of fp]"`` in at most 63 bytes of UTF-8 (the name is cut, not the fp)."""
        suffix = f" [{self.fingerprint[:_FP_IN_LABEL]}]"
        # dots would read as label separators to some resolvers
        name = self.name.replace(".", " ").strip() or "table"
        budget = MAX_LABEL - len(suffix.encode())
        while len(name.encode()) > budget:
            name = name[:-1]
        return name.rstrip() + suffix


@dataclass(frozen=True, slots=True)
class TableInfo:
    """A table heard on the network. ``host`` is the first advertised address; all are in
    ``addresses``; ``instance`` is the full DNS-SD service name."""

    name: str
    host: str
    port: int
    preset: str
    seats_taken: int
    max_seats: int
    fingerprint: str
    version: int
    addresses: tuple[str, ...] = ()
    instance: str = ""
    reach: tuple[str, ...] = ()  # more "host:port" the host advertised (--advertise)

    @property
    def seats_free(self) -> int:
        return self.max_seats - self.seats_taken


def _parse_txt(props: Mapping[bytes, bytes | None]) -> TableAd:
    def get(key: bytes) -> str:
        value = props.get(key)
        if value is None:
            raise ValueError(f"TXT has no {key.decode()}")
        return value.decode("utf-8")

    version = get(b"v")
    taken, sep, max_s = get(b"seats").partition("/")
    if not (version.isdigit() and taken.isdigit() and max_s.isdigit() and sep):
        raise ValueError("TXT v or seats is not numeric")
    return TableAd(
        name=get(b"name"),
        preset=get(b"preset"),
        seats_taken=int(taken),
        max_seats=int(max_s),
        fingerprint=get(b"fp"),
        version=int(version),
        reach=_reach(props.get(b"addrs")),
    )


def _reach(value: bytes | None) -> tuple[str, ...]:
    """TXT ``addrs``: the host's advertised lobby addresses; malformed entries are dropped."""
    from p2p_chinchon.net.lobby import parse_addr

    out = []
    for a in (value or b"").decode("utf-8", "replace").split(","):
        try:
            parse_addr(a)
        except ValueError:
            continue
        out.append(a)
    return tuple(out[:8])


def table_info_from_service(info: ServiceInfo) -> TableInfo:
    """Decode a resolved zeroconf ``ServiceInfo``. Raises ``ValueError`` for a bad ad."""
    if info.port is None or not 0 < info.port < 65536:
        raise ValueError("no port")
    ad = _parse_txt(info.properties or {})
    addresses = tuple(info.parsed_addresses(IPVersion.V4Only))
    if not addresses:
        raise ValueError("no IPv4 address")
    return TableInfo(
        name=ad.name,
        host=addresses[0],
        port=info.port,
        preset=ad.preset,
        seats_taken=ad.seats_taken,
        max_seats=ad.max_seats,
        fingerprint=ad.fingerprint,
        version=ad.version,
        addresses=addresses,
        instance=info.name,
        reach=ad.reach,
    )


def _packed_addresses(port: int, addresses: Iterable[str] | None) -> list[bytes]:
    """Check ``port`` and pack the IPv4 ``addresses`` (default :func:`local_addresses`) for an
    A record. Raises ``ValueError``."""
    if type(port) is not int or not 0 < port < 65536:
        raise ValueError(f"port {port!r} out of range")
    addrs = list(addresses) if addresses is not None else local_addresses()
    packed = [ipaddress.IPv4Address(a).packed for a in addrs]
    if not packed:
        raise ValueError("no address to advertise")
    return packed


def service_info(ad: TableAd, port: int, addresses: Iterable[str] | None = None) -> ServiceInfo:
    """The zeroconf ``ServiceInfo`` that :func:`advertise` registers (see module docstring).
    Raises ``ValueError`` for a port outside 1..65535 or a bad/missing IPv4 address."""
    packed = _packed_addresses(port, addresses)
    fp_label = re.sub(r"[^a-z0-9]", "", ad.fingerprint.lower())[:32]
    return ServiceInfo(
        SERVICE_TYPE,
        f"{ad.instance_label()}.{SERVICE_TYPE}",
        port=port,
        properties=ad.txt(),
        server=f"chinchon-{fp_label}-{port}.local.",
        addresses=packed,
    )


def _new_zeroconf(interfaces: Sequence[str] | None) -> Zeroconf:
    return Zeroconf(
        interfaces=list(interfaces) if interfaces else InterfaceChoice.All,
        ip_version=IPVersion.V4Only,
        use_asyncio=False,
    )


async def _close_zeroconf(zc: Zeroconf, browser: ServiceBrowser | None = None) -> None:
    """Cancel ``browser`` and close ``zc`` (goodbyes for its services), even when cancelled.
    Never raises: zeroconf's errors on the way out are logged, one line each. When the
    goodbyes cannot go out (``EventLoopBlocked`` from ``unregister_all_services``: zeroconf's
    own loop was too busy) its sockets and threads are closed without them, and the records
    expire by their TTL on the listeners' side."""
    with trio.CancelScope(shield=True):
        if browser is not None:
            try:
                await trio.to_thread.run_sync(browser.cancel)
            except Exception as exc:  # noqa: BLE001 - closing zeroconf must not fail the caller
                log.warning("mDNS: stopping the browser failed: %s", exc or type(exc).__name__)
        try:
            await trio.to_thread.run_sync(zc.close)
        except Exception as exc:  # noqa: BLE001 - e.g. EventLoopBlocked
            log.warning("mDNS: no goodbye sent (%s): the record expires by itself", exc or type(exc).__name__)
            zc.unregister_all_services = lambda: None  # type: ignore[method-assign]  # close the rest
            try:
                await trio.to_thread.run_sync(zc.close)
            except Exception as exc2:  # noqa: BLE001
                log.warning("mDNS: closing zeroconf failed: %s", exc2 or type(exc2).__name__)


class Advertisement:
    """A registered table ad; returned by :func:`advertise`."""

    def __init__(self, zc: Zeroconf, ad: TableAd, info: ServiceInfo) -> None:
        self._zc = zc
        self._info = info
        self._lock = trio.Lock()
        self.ad = ad
        """The :class:`TableAd` currently advertised."""

    @property
    def instance(self) -> str:
        """Full service name as registered (zeroconf may have renamed it on a conflict)."""
        return str(self._info.name)

    @property
    def port(self) -> int:
        return int(self._info.port or 0)

    @property
    def addresses(self) -> list[str]:
        return list(self._info.parsed_addresses())

    async def update(self, seats_taken: int, *, max_seats: int | None = None) -> None:
        """Re-announce the TXT record with new seat counts. Raises ``ValueError`` if out of
        range (then nothing is sent)."""
        async with self._lock:
            ad = replace(
                self.ad,
                seats_taken=seats_taken,
                max_seats=self.ad.max_seats if max_seats is None else max_seats,
            )
            info = ServiceInfo(
                SERVICE_TYPE,
                self._info.name,
                port=self._info.port,
                properties=ad.txt(),
                server=self._info.server,
                addresses=self._info.addresses,
            )
            await trio.to_thread.run_sync(self._zc.update_service, info)
            self._info = info
            self.ad = ad


@asynccontextmanager
async def advertise(
    info: TableAd,
    port: int,
    addresses: Iterable[str] | None = None,
    *,
    interfaces: Sequence[str] | None = None,
) -> AsyncIterator[Advertisement]:
    """Advertise a table while the ``async with`` body runs; goodbye packets on exit.

    Args:
        info: the :class:`TableAd`.
        port: the lobby's TCP port.
        addresses: IPv4 addresses to put in A records (default :func:`local_addresses`).
        interfaces: addresses of the interfaces zeroconf binds (default all).

    Entering takes ~2 s (mDNS probing). Raises ``ValueError`` for a bad port or address,
    ``OSError`` if zeroconf cannot open its sockets.
    """
    service = service_info(info, port, addresses)
    addrs = service.parsed_addresses()
    zc = await trio.to_thread.run_sync(_new_zeroconf, interfaces)
    try:
        await trio.to_thread.run_sync(
            functools.partial(zc.register_service, service, allow_name_change=True)
        )
        log.info("advertising %s on port %d at %s", service.name, port, addrs)
        yield Advertisement(zc, info, service)
    finally:
        await _close_zeroconf(zc)  # close() unregisters, i.e. sends the goodbyes


class TableBrowser:
    """Live view of the tables on the network, from :func:`browse_tables`.

    ``snapshot()`` is the current list; ``async for tables in browser`` yields a fresh list
    (sorted by name, then instance) after each change. A slow consumer skips intermediate
    states rather than queueing them.
    """

    def __init__(self) -> None:
        self._tables: dict[str, TableInfo] = {}
        self._version = 0
        self._seen = 0
        self._changed = trio.Event()

    def snapshot(self) -> list[TableInfo]:
        return sorted(self._tables.values(), key=lambda t: (t.name, t.instance))

    def _publish(self) -> None:
        self._version += 1
        self._changed.set()
        self._changed = trio.Event()

    def __aiter__(self) -> TableBrowser:
        return self

    async def __anext__(self) -> list[TableInfo]:
        while self._seen == self._version:
            await self._changed.wait()
        self._seen = self._version
        return self.snapshot()

    async def _pump(
        self,
        zc: Zeroconf,
        events: trio.MemoryReceiveChannel[tuple[str, ServiceStateChange]],
        resolve_timeout: float,
    ) -> None:
        generation: dict[str, int] = {}
        async with trio.open_nursery() as nursery:
            async for name, change in events:
                generation[name] = generation.get(name, 0) + 1
                if change is ServiceStateChange.Removed:
                    if self._tables.pop(name, None) is not None:
                        self._publish()
                else:
                    nursery.start_soon(self._resolve, zc, name, generation, resolve_timeout)

    async def _resolve(
        self, zc: Zeroconf, name: str, generation: dict[str, int], timeout: float
    ) -> None:
        gen = generation[name]
        service = await trio.to_thread.run_sync(
            zc.get_service_info, SERVICE_TYPE, name, int(timeout * 1000), abandon_on_cancel=True
        )
        if generation.get(name) != gen:
            return  # a newer event for this name superseded this lookup
        if service is None:
            log.debug("mDNS: could not resolve %s", name)
            return
        try:
            table = table_info_from_service(service)
        except (ValueError, UnicodeDecodeError) as exc:
            log.debug("mDNS: ignoring %s: %s", name, exc)
            return
        if self._tables.get(name) != table:
            self._tables[name] = table
            self._publish()


@asynccontextmanager
async def _browsing(
    service_type: str, interfaces: Sequence[str] | None,
    accept: Callable[[str, ServiceStateChange], bool] = lambda name, change: True,
) -> AsyncIterator[tuple[Zeroconf, trio.MemoryReceiveChannel[tuple[str, ServiceStateChange]]]]:
    """Browse ``service_type`` while the body runs: yields the Zeroconf instance and a channel
    of the ``(name, change)`` events that ``accept`` keeps, carried from zeroconf's threads into
    trio (late events after the body are dropped, never raised into the run)."""
    token = trio.lowlevel.current_trio_token()
    send, receive = trio.open_memory_channel[tuple[str, ServiceStateChange]](math.inf)

    def forward(item: tuple[str, ServiceStateChange]) -> None:
        try:
            send.send_nowait(item)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass

    def on_change(
        zeroconf: Zeroconf, service_type: str, name: str, state_change: ServiceStateChange
    ) -> None:  # runs on a zeroconf thread
        if not accept(name, state_change):
            return
        try:
            token.run_sync_soon(forward, (name, state_change))
        except trio.RunFinishedError:
            pass

    zc = await trio.to_thread.run_sync(_new_zeroconf, interfaces)
    browser: ServiceBrowser | None = None
    try:
        browser = await trio.to_thread.run_sync(
            functools.partial(ServiceBrowser, zc, service_type, handlers=[on_change])
        )
        yield zc, receive
    finally:
        send.close()
        await _close_zeroconf(zc, browser)


@asynccontextmanager
async def browse_tables(
    *, interfaces: Sequence[str] | None = None, resolve_timeout: float = 3.0
) -> AsyncIterator[TableBrowser]:
    """Browse for tables while the ``async with`` body runs; yields a :class:`TableBrowser`."""
    async with _browsing(SERVICE_TYPE, interfaces) as (zc, receive):
        tables = TableBrowser()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(tables._pump, zc, receive, resolve_timeout)
            try:
                yield tables
            finally:
                nursery.cancel_scope.cancel()


async def browse(timeout: float, **kwargs: Any) -> list[TableInfo]:
    """Listen for ``timeout`` seconds and return the tables heard (see :func:`browse_tables`
    for keyword arguments)."""
    async with browse_tables(**kwargs) as tables:
        await trio.sleep(timeout)
        return tables.snapshot()


# ---------------------------------------------------------------------------- seats
#
# A seated peer also advertises where its mesh listens, so the others can find it again when
# its address changed (DHCP after a sleep, another Wi-Fi): one DNS-SD instance per seat,
# ``_chinchon-seat._tcp.local.``, label ``"<game id, 32 hex>-<seat>"``, SRV port = the seat's
# mesh port, A records = its addresses, TXT ``v``, ``game`` (hex), ``seat``, ``a`` (its IPv4
# addresses, comma-separated), ``p`` (its port) and ``sig``: the seat's Ed25519 signature (hex)
# of SEAT_RECORD_LABEL || game || seat (u8) || port (u16be) || the ``a`` text, so a LAN
# neighbour cannot forge or overwrite one (a locator given the seating's keys keeps only signed
# records, the last few per seat). A link to the address found is still bound to the seat's
# key by TLS and the mesh handshake.

SEAT_SERVICE_TYPE = "_chinchon-seat._tcp.local."
SEAT_RECORD_LABEL = b"p2p-chinchon/seat-record/v1\x00"
SEAT_RECORDS_KEPT = 4  # distinct signed records kept per seat (an old one may be replayed)


def seat_record_message(game: bytes, seat: int, port: int, addrs: str) -> bytes:
    """The bytes a seat signs for its record (see the section comment)."""
    return SEAT_RECORD_LABEL + game + bytes([seat]) + port.to_bytes(2, "big") + addrs.encode()


def seat_service_info(game: bytes, seat: int, port: int, addresses: Iterable[str] | None = None,
                      sign: Callable[[bytes], bytes] | None = None) -> ServiceInfo:
    """The zeroconf ``ServiceInfo`` of one seat's mesh listener (see the section comment),
    signed with ``sign`` (the seat's Ed25519 key) when given. Raises ``ValueError`` for a bad
    game id, seat, port or address."""
    if not isinstance(game, bytes) or len(game) != 16:
        raise ValueError("game id must be 16 bytes")
    if type(seat) is not int or not 0 <= seat < 256:
        raise ValueError(f"seat {seat!r} out of range")
    packed = _packed_addresses(port, addresses)
    label = f"{game.hex()}-{seat}"
    text = ",".join(str(ipaddress.IPv4Address(a)) for a in packed)
    props = {b"v": str(PROTOCOL_VERSION).encode(), b"game": game.hex().encode(), b"seat": str(seat).encode(),
             b"a": text.encode(), b"p": str(port).encode()}
    if sign is not None:
        props[b"sig"] = sign(seat_record_message(game, seat, port, text)).hex().encode()
    return ServiceInfo(
        SEAT_SERVICE_TYPE,
        f"{label}.{SEAT_SERVICE_TYPE}",
        port=port,
        properties=props,
        server=f"chinchon-seat-{label}.local.",
        addresses=packed,
    )


class SeatLocator:
    """Where the seats of one game say their mesh listens, from their mDNS records
    (:func:`advertise_seat`). With ``keys`` (seat -> raw Ed25519 public key, the seating's),
    only records signed by that seat's key count, the last :data:`SEAT_RECORDS_KEPT` distinct
    ones per seat; without, the last record of each seat (a forged one included).
    :meth:`lookup` is synchronous (the mesh's dialler calls it)."""

    def __init__(self, game: bytes, keys: Mapping[int, bytes] | None = None) -> None:
        self.game = game
        self._keys = None if keys is None else {s: Ed25519PublicKey.from_public_bytes(k) for s, k in keys.items()}
        self._found: dict[int, list[list[tuple[str, int]]]] = {}  # seat -> its records, newest first

    def lookup(self, seat: int) -> list[tuple[str, int]]:
        """``[(address, port), ...]`` advertised by ``seat``, newest first (empty if none)."""
        return list(dict.fromkeys(p for record in self._found.get(seat, []) for p in record))

    def _take(self, info: ServiceInfo) -> None:
        props = info.properties or {}
        try:
            game = bytes.fromhex((props.get(b"game") or b"").decode())
            seat = int((props.get(b"seat") or b"").decode())
            text = (props.get(b"a") or b"").decode()
            port = int((props.get(b"p") or b"0").decode()) if b"p" in props else int(info.port or 0)
            addrs = [str(ipaddress.IPv4Address(a)) for a in text.split(",")] if text else \
                [a for a in info.parsed_addresses() if "." in a]
            if self._keys is not None:
                key = self._keys.get(seat)
                if key is None:
                    return
                key.verify(bytes.fromhex((props.get(b"sig") or b"").decode()),
                           seat_record_message(game, seat, port, text))
        except (ValueError, UnicodeDecodeError, OverflowError, InvalidSignature):
            return
        if game != self.game or not 0 < port < 65536 or not addrs:
            return
        record = [(a, port) for a in addrs]
        kept = 1 if self._keys is None else SEAT_RECORDS_KEPT
        self._found[seat] = ([record] + [r for r in self._found.get(seat, []) if r != record])[:kept]
        log.info("mDNS: seat %d of this game listens at %s port %d", seat, addrs, port)


@asynccontextmanager
async def advertise_seat(
    game: bytes, seat: int, port: int | None, *, locator: SeatLocator | None = None,
    interfaces: Sequence[str] | None = None, sign: Callable[[bytes], bytes] | None = None,
    addresses: Iterable[str] | None = None,
) -> AsyncIterator[SeatLocator]:
    """Watch the seats' records of ``game`` (into ``locator``, or a new :class:`SeatLocator`)
    and advertise this seat's mesh listener on ``port`` (None: a seat that only dials) while
    the body runs (goodbye on exit). Yields the locator; entering takes ~2 s (mDNS probing),
    the watching starts at once. Raises ``ValueError`` (bad arguments), ``OSError`` (no mDNS
    sockets). ``addresses``: the IPv4 addresses of the record (default :func:`local_addresses`)."""
    service = seat_service_info(game, seat, port, addresses, sign=sign) if port is not None else None
    locator = locator if locator is not None else SeatLocator(game)

    def ours(name: str, change: ServiceStateChange) -> bool:
        return change is not ServiceStateChange.Removed and name.startswith(game.hex())

    async with _browsing(SEAT_SERVICE_TYPE, interfaces, ours) as (zc, receive):

        async def resolve(name: str) -> None:
            info = await trio.to_thread.run_sync(
                zc.get_service_info, SEAT_SERVICE_TYPE, name, 3000, abandon_on_cancel=True)
            if info is not None:
                locator._take(info)

        if service is not None:  # a restarted seat takes back the name its crashed self held
            await trio.to_thread.run_sync(functools.partial(zc.register_service, service, allow_name_change=True))
        async with trio.open_nursery() as nursery:
            async def pump() -> None:
                async for name, _change in receive:
                    nursery.start_soon(resolve, name)

            nursery.start_soon(pump)
            try:
                yield locator
            finally:
                nursery.cancel_scope.cancel()
