"""Host or join a table and play it to the end: lobby, (mDNS), seating, mesh, game.

These are the trio entry points behind ``host``, ``join``, ``play`` and ``resume``: each takes
one configuration object (:class:`HostConfig`, :class:`JoinConfig`, :class:`ResumeConfig`) and
one :class:`~p2p_chinchon.net.node.Events` (what the seat's player hears and decides). The
table logic is all in the sans-I/O :class:`~p2p_chinchon.table.Table`.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import trio

from p2p_chinchon import table as tbl, view as v
from p2p_chinchon.identity import fingerprint
from p2p_chinchon.net import lobby as lob, node as nd
from p2p_chinchon.net.lobby import format_addr
from p2p_chinchon.net.secretsfile import Secrets
from p2p_chinchon.net.status import english

log = logging.getLogger(__name__)

CUT_AND_CHOOSE_MIN_ROUNDS = 64
"""Fewest cut-and-choose rounds a joiner accepts by default: a shuffler forges a
k-round proof by grinding about 2^k Fiat-Shamir challenges."""


def weak_proofs(rules: Any, proof_rounds: int, min_proof_rounds: int | None = None) -> str | None:
    """Why a table's shuffle proofs are too weak to sit at, or None. The bar depends on the
    proof system the rules name (``rules.shuffle_proof``; cut-and-choose when absent): only
    cut-and-choose is measured in rounds, ``min_proof_rounds`` (default
    :data:`CUT_AND_CHOOSE_MIN_ROUNDS`) of them."""
    system = getattr(rules, "shuffle_proof", None) or "cut-and-choose"
    if system != "cut-and-choose":
        return None
    need = CUT_AND_CHOOSE_MIN_ROUNDS if min_proof_rounds is None else min_proof_rounds
    if proof_rounds < need:
        return (f"the table's cut-and-choose shuffle proofs use k = {proof_rounds} rounds; "
                f"this seat requires at least {need}")
    return None


@dataclass
class SeatConfig:
    """What any seat needs. ``transcript_path``: a path, or (joiners) a function of the seated
    table; None keeps no transcript (and no secrets, so no rejoin). ``bind``: the address the
    lobby/mesh listen on. ``timeouts``: see :class:`~p2p_chinchon.net.node.Timeouts`."""

    identity: Any
    rng: Any
    player_name: str
    transcript_path: Path | Callable[[tbl.Table], Path] | None = None
    timeouts: nd.Timeouts | None = None
    bind: str = "0.0.0.0"
    auto_agree: bool = False
    defer_proofs: bool = True
    keep_identity: bool = False  # an identity kept nowhere else (bots): saved with the secrets


@dataclass
class HostConfig(SeatConfig):
    """A host's table: ``rules``, ``seats`` (players, host included), the table ``name``,
    ``proof_rounds`` (k; None = the rules'), lobby ``port`` (0 = any) and mDNS ``advertise``.
    ``sockets``: lobby sockets already listening (:mod:`~p2p_chinchon.net.listen`), taken
    over instead of binding ``bind:port``."""

    rules: Any = None
    seats: int = 2
    name: str = ""
    proof_rounds: int | None = None
    port: int = 0
    advertise: bool = True
    auto_agree: bool = True
    # async (request, source_ip, *, came, queued) -> True, False or lobby.REFUSE_ADDRESS: the
    # host's person approves each joiner (name and fingerprint) before it is seated
    # (nd.host_lobby); None seats the first comers (--open: bots, demos, tests)
    approve: Callable[..., Any] | None = None
    sockets: list[socket.socket] | None = None
    # --advertise: more addresses where joiners may reach the lobby ("HOST[:PORT]", e.g. a VPN
    # address or a router's public address with a forwarded port): in the mDNS ad, for
    # ``join --list`` (seat 0 only dials: its mesh needs no address)
    reach: tuple[str, ...] = ()
    # --code: hand out code words on the magic-wormhole ``mailbox`` (a URL); links
    # that do not come up directly meet at the transit ``relay`` ("host:port"), which the
    # code exchange names to every joiner
    code: bool = False
    mailbox: str = ""
    relay: str = ""


@dataclass
class JoinConfig(SeatConfig):
    """Where to sit: the host's lobby ``host:port``; ``expect_fingerprint``: the host key the LAN
    advertised (the lobby's TLS key is pinned to it); ``min_proof_rounds``: refuse weaker
    cut-and-choose tables (None: :data:`CUT_AND_CHOOSE_MIN_ROUNDS`, see :func:`weak_proofs`);
    ``wait``: seconds to keep trying while nobody answers at that address (host not up yet).
    ``mesh_port``: the port our mesh listens on (0 = any: a player who forwards a port picks
    it); ``reach``: ``--advertise HOST[:PORT]`` entries, offered before our interface
    addresses as where the others may dial us (docs/protocol.md "Lobby")."""

    host: str = "127.0.0.1"
    port: int = 0
    table_cls: type[tbl.Table] = tbl.Table
    min_proof_rounds: int | None = None
    expect_fingerprint: str | None = None
    wait: float = 0.0
    mdns: bool = False  # found by mDNS: advertise this seat and find moved seats the same way
    mesh_port: int = 0
    reach: tuple[str, ...] = ()
    # join --code WORD: the host is found through the ``mailbox`` (a URL), not at
    # host:port; nobody answering within ``code_wait`` s means a mistyped or expired code
    code: str | None = None
    mailbox: str = ""
    code_wait: float = 60.0
    # a rematch: the table the seat agreed to play again; the new offer must carry
    # the same host key, rules, seats and proof rounds (then ``auto_agree`` signs its agree)
    rematch_of: tbl.Table | None = None


RELAY_AFTER = 4.0  # seconds the direct addresses get before a code-word link meets at the relay
CODE_BACKOFF_MAX = 30.0  # most seconds the host waits before its next code after burnt ones (1, 2, 4, ...)


class CodeWordError(Exception):
    """A code word that leads nowhere: wrong, mistyped or expired (exit code 2)."""


def same_table(old: tbl.Table, new: tbl.Table) -> str | None:
    """Why ``new`` (an offer just received) is not a rematch of ``old``, or None."""
    if new.lobby.offer_key != old.lobby.players[0].key:
        return "the rematch is offered by another host key"
    if new.lobby.rules != old.lobby.rules or new.lobby.max_seats != len(old.lobby.players) or new.lobby.proof_rounds != old.lobby.proof_rounds:
        return "the rematch's table has other rules than the game agreed to play again"
    if new.lobby.game == old.lobby.game:
        return "the rematch reuses the last game's id"
    return None


def _left_lobby(table: tbl.Table | None, path: Any) -> nd.NodeResult:
    """The result of a seat that left before the game began (nothing was signed by it)."""
    me = table.lobby.me if table is not None and table.lobby.me is not None else 0
    names = [p.name for p in table.lobby.players] if table is not None else []
    return nd.NodeResult(winner=None, fault=v.Fault(me, "left", "you left the table"),
                         transcript=path if isinstance(path, Path) else None, head=b"",
                         seat=me, names=names)


async def host_game(config: HostConfig, events: nd.Events | None = None) -> nd.NodeResult:
    """Open a table, wait for ``config.seats`` players, then play. ``events.listening(port)``
    is called once the lobby accepts joiners (``play`` starts its bot peers then); a
    :class:`~p2p_chinchon.view.Leave` from ``events.wait_leave`` before the table is full
    closes it at once (mDNS goodbye) and returns a "left" result."""
    c, events = config, events or nd.Events()
    if c.sockets:
        listeners = [trio.SocketListener(trio.socket.from_stdlib_socket(s)) for s in c.sockets]
    else:
        listeners = await trio.open_tcp_listeners(c.port, host=c.bind)
    lobby_port = listeners[0].socket.getsockname()[1]
    served: list[trio.abc.Listener[Any]] = list(listeners)  # and the relay's, with a code word
    table = tbl.Table.create(
        c.identity, c.rng, name=c.name, rules=c.rules, max_seats=c.seats,
        addr=format_addr("127.0.0.1" if c.bind in ("127.0.0.1", "localhost") else c.bind, lobby_port),
        proof_rounds=c.proof_rounds, auto_agree=c.auto_agree, defer_proofs=c.defer_proofs,
    )
    table.lobby.set_host_name(c.player_name)
    events.table_ready(table)
    events.update(table.view())

    def seated(t: tbl.Table, seat: int | None, name: str) -> None:
        n = len(t.lobby.pending_players)
        t.events.event("seated" if seat is not None else "unseated", (seat,), names=(name,), numbers=(n, c.seats))
        events.update(t.view())
        if ad is not None:
            nursery.start_soon(_quietly, "update the table's mDNS record", ad.update, n)

    def notice(text: str, key: str, fields: dict[str, Any]) -> None:
        events.notice(text, key, fields, lasting=True)

    ad = None
    left = False
    relayed_in = None
    relay = None
    approve = c.approve
    refused: list[frozenset[str]] = []  # the addresses of each joiner the host's person refused
    if c.code and approve is not None:
        asked = approve

        async def approve(request: Any, ip: str, **kw: Any) -> bool | str:
            answer: bool | str = await asked(request, ip, **kw)
            if answer is not True:  # the code loop shows the next code word at once
                refused.append(frozenset(request.candidates))
            return answer

    if c.code:
        from p2p_chinchon.net.rendezvous import parse_relay

        relay = parse_relay(c.relay)
        await _probe_relay(*relay)  # a table whose relay is down would seat nobody from afar
        relayed_in = lob.StreamListener()
        served.append(relayed_in)
    async with trio.open_nursery() as nursery:
        if c.advertise:
            from p2p_chinchon.net import discovery

            info = discovery.TableAd(
                name=c.name, preset=_preset_name(c.rules), seats_taken=1, max_seats=c.seats,
                fingerprint=c.identity.fingerprint, reach=lobby_reach(c.reach, lobby_port),
            )
            ad = await nursery.start(_advertise, discovery, info, lobby_port)
        events.listening(lobby_port)

        async def watch_leave() -> None:
            nonlocal left
            await events.wait_leave()
            left = True
            nursery.cancel_scope.cancel()  # closes the lobby and sends the mDNS goodbye

        nursery.start_soon(watch_leave)
        if relayed_in is not None:
            nursery.start_soon(_hand_out_codes, c, table, relayed_in, events, lobby_port, refused)
        await nd.host_lobby(table, served, seats=c.seats, on_seated=seated, approve=approve,
                            notice=notice)
        nursery.cancel_scope.cancel()  # stop advertising: the table is full
    if left and not table.seated:
        return _left_lobby(None, c.transcript_path)
    path = c.transcript_path(table) if callable(c.transcript_path) else c.transcript_path
    mesh_in = await _host_mesh_listeners(lobby_port, c.bind)
    return await nd.run_seat(table, mesh_in, events, transcript_path=path, timeouts=c.timeouts,
                             keep_identity=c.keep_identity, mdns=c.advertise, relay=relay)


async def _host_mesh_listeners(port: int, bind: str | None) -> list[trio.SocketListener] | None:
    """Seat 0 listens on its seating's (the lobby's) port while it plays: a seat whose link to
    it is down dials it there (a host's dials may go to an address that seat left). None, and
    a warning, when the port cannot be had again: the host dials as before."""
    try:
        return await trio.open_tcp_listeners(port, host=bind)
    except OSError as exc:
        log.warning("seat 0 cannot listen on port %d for the others' dials: %s", port, nd.error_text(exc))
        return None


async def _probe_relay(host: str, port: int) -> None:
    """Raise :class:`~.relay.RelayDown` unless the transit relay accepts a TCP connection."""
    from p2p_chinchon.net.mesh import _dial_error
    from p2p_chinchon.net.relay import RelayDown

    try:
        with trio.fail_after(10):
            stream = await trio.open_tcp_stream(host, port)
    except (OSError, trio.TooSlowError) as exc:
        why = "no answer" if isinstance(exc, trio.TooSlowError) else _dial_error(exc)
        raise RelayDown(f"cannot reach the transit relay at {format_addr(host, port)} ({why})") from None
    await trio.aclose_forcefully(stream)


async def _hand_out_codes(c: HostConfig, table: tbl.Table, relayed_in: lob.StreamListener, events: nd.Events,
                          lobby_port: int, refused: Sequence[frozenset[str]] = ()) -> None:
    """The host's side: one code word at a time on the mailbox, told to the host's
    person; a joiner who types it gets our lobby addresses, fingerprint and relay (the SPAKE2
    key authenticates us to them), and meets our lobby at the relay under the key's token if
    it cannot reach us directly. A new code follows each use, while seats are free: once that
    joiner sits, or is refused (``refused``, grown by the lobby: each refused joiner's
    addresses), or after a minute. Raises :class:`~.mailbox.MailboxError` when the mailbox
    cannot be reached."""
    from p2p_chinchon.net import mailbox as mb, rendezvous as rz
    from p2p_chinchon.net.addresses import candidate_addresses

    relay = rz.parse_relay(c.relay)
    lobby = candidate_addresses(lobby_port, c.reach)
    hello = rz.encode_host_hello(c.identity.fingerprint, lobby, format_addr(*relay))

    def seated() -> int:
        return len(table.lobby.pending_players)

    burnt = 0  # codes in a row that no friend used (wrong, junk): each waits longer for the next
    handed = False  # a code was shown: the table is open, and a mailbox gone later must not close it
    async with trio.open_nursery() as nursery:
        while seated() < c.seats:
            if burnt:  # someone burning our codes (claiming nameplates with wrong words) gets a
                await trio.sleep(min(CODE_BACKOFF_MAX, 2.0 ** (burnt - 1)))  # few codes a minute
            burnt += 1
            try:
                session = await mb.CodeSession.open(c.mailbox)
                try:
                    code = await session.allocate()
                    handed = True
                    # a group's own mailbox: the friend must be told it too, or they ask the public one
                    join = code if c.mailbox == rz.DEFAULT_MAILBOX else f"{code} --mailbox {c.mailbox}"
                    events.notice(english("code_word", code=code, join=join), "code_word", {"code": code, "join": join},
                                  lasting=True)
                    await session.send(hello)
                    try:
                        their = rz.decode_joiner_hello(await session.receive())
                        key = await session.derive(rz.LOBBY_PURPOSE)
                    except mb.WrongCode:
                        events.notice(english("code_wrong"), "code_wrong", {}, lasting=True)
                        continue
                    except mb.MailboxDown:
                        raise  # below
                    except (rz.CodeError, mb.MailboxError) as exc:
                        log.warning("code word %s: %s", code, exc)
                        continue
                finally:
                    await session.close()
            except mb.MailboxDown:
                if not handed:
                    raise  # at the start: one line and exit, nobody is seated yet
                # gone mid-lobby: the table stays open (the LAN, codes told already); say so
                # and try again after CODE_BACKOFF_MAX
                events.notice(english("code_mailbox_down", s=f"{CODE_BACKOFF_MAX:g}"), "code_mailbox_down",
                              {"s": f"{CODE_BACKOFF_MAX:g}"}, lasting=True)
                burnt = max(burnt, 6)
                continue
            burnt = 0
            log.info("code word %s used by a joiner at %s", code, ", ".join(their) or "no address")
            events.notice(english("code_met", code=code), "code_met", {"code": code}, lasting=True)
            came = trio.Event()
            nursery.start_soon(_meet_joiner, relay, rz.lobby_token(key), relayed_in, came)
            before, asked, friend = seated(), len(refused), frozenset(their)

            def waiting(before: int = before, asked: int = asked, friend: frozenset[str] = friend) -> bool:
                return seated() <= before and friend not in refused[asked:]  # neither sat nor refused yet

            with trio.move_on_after(60):  # the next code once this friend sat, was refused (or gave up)
                while waiting() and not came.is_set():
                    await trio.sleep(0.2)
                while waiting():  # came through the relay: wait for the seat
                    await trio.sleep(0.2)


async def _meet_joiner(relay: tuple[str, int], token: str, relayed_in: lob.StreamListener, came: trio.Event) -> None:
    """Wait (2 min) at the relay for the joiner of one code word and hand its connection to
    the lobby; a joiner who reached us directly never comes, which costs only the wait."""
    from p2p_chinchon.net.relay import RelayError, meet
    from p2p_chinchon.net.rendezvous import relay_side

    try:
        stream = await meet(*relay, token, relay_side(0, lobby_host=True), wait=120)
    except (RelayError, trio.TooSlowError) as exc:
        log.info("no joiner met at the transit relay: %s", exc or "nobody came in 2 minutes")
        came.set()
        return
    came.set()
    await relayed_in.put(stream)



async def _advertise(discovery: Any, info: Any, port: int, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    """Advertise the table until cancelled; started with the ad, or None when mDNS fails.
    Never raises (but Cancelled): mDNS is a convenience (``--connect`` still works), so
    zeroconf's errors, on the way in or out, are one logged line."""
    up = False
    try:
        async with discovery.advertise(info, port) as ad:
            task_status.started(ad)
            up = True
            await trio.sleep_forever()
    except Exception as exc:  # noqa: BLE001 - the boundary between zeroconf and the lobby
        log.warning("mDNS: the table's advertisement failed: %s", nd.error_text(exc))
        if not up:
            task_status.started(None)


async def _quietly(what: str, fn: Callable[..., Any], *args: Any) -> None:
    """``await fn(*args)``; an error is one logged line (``what`` failed), never the lobby's."""
    try:
        await fn(*args)
    except Exception as exc:  # noqa: BLE001 - a convenience failing must not stop the table
        log.warning("could not %s: %s", what, nd.error_text(exc))


def lobby_reach(reach: Any, port: int) -> tuple[str, ...]:
    """A host's ``--advertise HOST[:PORT]`` entries as ``"host:port"`` (the lobby's ``port``
    when none is given)."""
    from p2p_chinchon.net.addresses import candidate_addresses

    return tuple(candidate_addresses(port, reach, interfaces=()))


def _preset_name(rules: Any) -> str:
    return getattr(rules, "preset", None) or getattr(rules, "name", None) or "custom"


async def join_game(config: JoinConfig, events: nd.Events | None = None) -> nd.NodeResult:
    """Sit down at ``config.host:config.port`` and play. Our mesh listener is opened first: its
    port goes in the join request; the host fills in the address it sees us from. Leaving
    (``events.wait_leave``) before the seating frees our seat at once."""
    c, events = config, events or nd.Events()
    from p2p_chinchon.net.addresses import candidate_addresses

    listeners = await trio.open_tcp_listeners(c.mesh_port, host=c.bind)
    listen_port = listeners[0].socket.getsockname()[1]
    candidates = candidate_addresses(listen_port, c.reach)
    box: list[tbl.Table] = []
    connect = relay = None
    expect = c.expect_fingerprint
    if c.code is not None:
        try:
            hello, key = await _use_code(c, candidates)
        except BaseException:
            for lst in listeners:
                await trio.aclose_forcefully(lst)
            raise
        from p2p_chinchon.net.rendezvous import lobby_token, parse_relay

        relay = parse_relay(hello.relay)
        expect = hello.fingerprint  # the code authenticated the host: its lobby's TLS key is pinned to it
        connect = partial(_code_connect, hello.candidates, relay, lobby_token(key))

    def check_offer(offer: bytes, tls_key: bytes) -> None:
        """Refuse before sitting down: a bad or weak offer, or an offer signed by another key
        than the one whose TLS certificate we pinned (someone relaying another host's offer)."""
        t = c.table_cls.joining(c.identity, c.rng, offer, auto_agree=c.auto_agree,
                                defer_proofs=c.defer_proofs, min_proof_rounds=1)  # judged below
        weak = weak_proofs(t.lobby.rules, t.lobby.proof_rounds, c.min_proof_rounds)
        if weak is not None:  # the same error the table gives for its own bar
            raise tbl.ProtocolViolation(0, "weak_proofs", weak, 0)
        if t.lobby.offer_key == c.identity.public_bytes:
            raise tbl.IntentError(
                "this table is hosted with your own identity key: one player cannot take two seats "
                "(to try two seats on one computer, give the second its own config and data folders, e.g. "
                "XDG_CONFIG_HOME=/tmp/seat2 XDG_DATA_HOME=/tmp/seat2 p2p-chinchon join: its own key, transcripts "
                "and evening tally)")
        if t.lobby.offer_key != tls_key:
            raise tbl.IntentError(f"the table's host key is {fingerprint(t.lobby.offer_key)}, but the lobby's "
                                  f"TLS certificate is {fingerprint(tls_key)}: refusing to sit down")
        if c.rematch_of is not None and (why := same_table(c.rematch_of, t)) is not None:
            raise tbl.IntentError(why)
        box.append(t)
        events.update(t.view())  # show the table (name, rules) from the moment we connect

    def on_lobby(players: tuple[tuple[str, bytes], ...]) -> None:
        """The host's unsigned list of who sits so far: shown until the seating is signed."""
        try:
            box[-1].lobby.set_lobby_players(players)
        except tbl.IntentError as exc:
            raise lob.BadAnswer(f"the host (seat 0) sent a bad lobby update: {exc}") from None
        events.update(box[-1].view())

    seating = None
    try:
        async with trio.open_nursery() as nursery:
            async def watch_leave() -> None:
                await events.wait_leave()
                nursery.cancel_scope.cancel()  # closes the lobby link: the host frees our seat

            nursery.start_soon(watch_leave)
            _offer, seating = await nd.join_lobby(
                c.identity, c.host, c.port, name=c.player_name, listen_port=listen_port, candidates=candidates,
                check_offer=check_offer, expect_fingerprint=expect, wait=c.wait,
                on_waiting=events.notice, on_lobby=on_lobby, connect=connect)
            nursery.cancel_scope.cancel()
        if seating is not None:
            table = box[-1]
            table.receive(seating, 0)
            if table.lobby.me is None:
                raise tbl.IntentError("the host's seating does not include us")
    except BaseException as exc:  # refused or failed before the mesh owns the listener: close it
        with trio.CancelScope(shield=True):
            for lst in listeners:
                await trio.aclose_forcefully(lst)
        leaf = exc
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]  # the lobby's nursery wraps the one real error
        raise leaf from None
    if seating is None:  # we left the lobby
        for listener in listeners:
            await trio.aclose_forcefully(listener)
        return _left_lobby(box[-1] if box else None, None)
    events.table_ready(table)
    path = c.transcript_path(table) if callable(c.transcript_path) else c.transcript_path
    host_at = (c.host, c.port) if c.code is None else None  # where the host answered us
    return await nd.run_seat(table, listeners, events, transcript_path=path, timeouts=c.timeouts,
                             keep_identity=c.keep_identity, mdns=c.mdns, reach=c.reach, relay=relay,
                             host_at=host_at)


async def _use_code(c: JoinConfig, candidates: list[str]) -> tuple[Any, bytes]:
    """The joiner's side of the mailbox: the host's hello and the lobby relay key.
    Raises :class:`CodeWordError` (wrong, or nobody holds the code within ``c.code_wait`` s),
    :class:`~.mailbox.MailboxError`."""
    from p2p_chinchon.net import mailbox as mb, rendezvous as rz

    code = rz.check_code(c.code or "")
    session = await mb.CodeSession.open(c.mailbox)
    try:
        await session.use(code)
        await session.send(rz.encode_joiner_hello(candidates))
        with trio.move_on_after(c.code_wait):
            try:
                hello = rz.decode_host_hello(await session.receive())
            except mb.WrongCode as exc:
                raise CodeWordError(str(exc)) from None
            return hello, await session.derive(rz.LOBBY_PURPOSE)
        raise CodeWordError(f"nobody holds the code word {code} (waited {c.code_wait:g} s): it is mistyped, "
                            "or it expired (the host shows a new one after each join)")
    finally:
        await session.close()


async def _code_connect(places: tuple[str, ...], relay: tuple[str, int], token: str, identity: Any,
                        **kwargs: Any) -> Any:
    """The lobby link of a code word: the host's addresses first (:data:`RELAY_AFTER` s), else
    through the transit relay under the code's token; the host's key is pinned either way."""
    from p2p_chinchon.net.relay import meet
    from p2p_chinchon.net.rendezvous import relay_side

    direct = await _first_tcp(places, RELAY_AFTER)
    if direct is not None:
        stream, place = direct
        try:
            return await lob.connect_lobby(*place, identity, stream=stream, **kwargs)
        except (OSError, trio.TooSlowError, lob.WrongHost) as exc:  # not our host there: the relay
            log.info("lobby not reached at %s: %s", format_addr(*place), nd.error_text(exc))
    relayed = await meet(*relay, token, relay_side(1), wait=60)
    log.info("lobby reached through the transit relay at %s", format_addr(*relay))
    return await lob.connect_lobby(*relay, identity, stream=relayed, **kwargs)


async def _first_tcp(places: tuple[str, ...], limit: float) -> tuple[trio.SocketStream, tuple[str, int]] | None:
    """A TCP connection to the first of ``places`` (``"host:port"``, tried together) that
    answers within ``limit`` s, or None."""
    won: list[tuple[trio.SocketStream, tuple[str, int]]] = []

    async def attempt(place: tuple[str, int], scope: trio.CancelScope) -> None:
        try:
            stream = await trio.open_tcp_stream(*place)
        except (OSError, UnicodeError):  # UnicodeError: a name IDNA refuses
            return
        if won:
            await trio.aclose_forcefully(stream)
            return
        won.append((stream, place))
        scope.cancel()

    parsed = []
    for text in places:
        try:
            parsed.append(lob.parse_addr(text))
        except ValueError:
            continue
    with trio.move_on_after(limit):
        async with trio.open_nursery() as nursery:
            for place in parsed:
                nursery.start_soon(attempt, place, nursery.cancel_scope)
    return won[0] if won else None


@dataclass
class ResumeConfig:
    """A seat coming back to a game it was playing: its ``transcript`` (the secrets file lies
    beside it), the ``identity`` to use when the secrets file holds none (people: their saved
    key), ``rng``, ``timeouts`` and the address to ``bind`` (the port is the seating's)."""

    transcript: Path
    identity: Any
    rng: Any
    timeouts: nd.Timeouts | None = None
    bind: str = "0.0.0.0"
    auto_agree: bool = False
    mdns: bool = False  # advertise this seat and find moved seats by mDNS (addresses change)
    reach: tuple[str, ...] = ()  # --advertise: put first in this seat's mDNS record (its IPv4 hosts)


class ResumeError(Exception):
    """This transcript cannot be resumed here (one sentence saying why)."""


def replay_seat(config: ResumeConfig) -> tuple[tbl.Table, Secrets, list[tbl.Job]]:
    """Rebuild this seat's table from its transcript and secrets, without sending anything:
    returns the table at the transcript's head, the secrets, and the table's jobs still to run
    (this hand's proof checks and shuffle preparation). Raises ResumeError."""
    from p2p_chinchon.identity import Identity
    from p2p_chinchon.transcript import load_transcript

    saved = nd.read_secrets(nd.secrets_path_for(config.transcript))
    if not saved:
        raise ResumeError(f"no saved secrets beside {config.transcript}: this game cannot be resumed")
    loaded = load_transcript(config.transcript)
    if not loaded.envelopes or loaded.errors:
        raise ResumeError(f"{config.transcript} is not a whole transcript")
    identity = Identity.from_seed(saved["identity"]) if "identity" in saved else config.identity
    table = tbl.Table(identity, config.rng, auto_agree=config.auto_agree, defer_proofs=True, min_proof_rounds=1)
    jobs: dict[int, tbl.Job] = {}
    keys = saved.get("keys", {})
    try:
        for env in loaded.envelopes:  # decoded by the load (no errors): not decoded again
            for out in table.replay(env):
                if isinstance(out, tbl.Job):
                    jobs[out.id] = out
            table.restore_secrets({"toss_nonce": saved.get("toss_nonce", b""), **keys.get(table.hand.hand_no, {})})
    except tbl.ProtocolViolation as exc:
        raise ResumeError(f"{config.transcript} does not replay: seq {exc.index}: {exc.reason}") from None
    if not table.seated:
        raise ResumeError(f"the game of {config.transcript} never began (nobody was seated): open a new table")
    if table.lobby.me is None:
        raise ResumeError(f"{config.transcript} is not a game this identity sits at")
    if table.flow.finished:
        return table, saved, []  # killed in its last moments: resume_game reports the end
    if table.flow.fault is not None or table.expected() is None:
        raise ResumeError(f"{config.transcript} holds a game that is over")
    live = table.resumable_jobs(list(jobs.values()))
    return table, saved, live


async def resume_game(config: ResumeConfig, events: nd.Events | None = None) -> nd.NodeResult:
    """Come back to a game after a crash or a drop: replay the transcript with the
    saved secrets, listen where the signed seating says this seat listens, reach the others,
    catch up through the mesh's SYNC, and play on. A game already finished in the transcript
    (the seat went down while leaving) gives its result at once. Raises ResumeError."""
    events = events or nd.Events()
    table, saved, jobs = await trio.to_thread.run_sync(replay_seat, config)
    if table.flow.finished:  # the game ended before this seat went down: its result, and no secrets left
        nd.secrets_path_for(config.transcript).unlink(missing_ok=True)
        return nd.NodeResult(
            winner=table.flow.winner, fault=None, transcript=config.transcript, head=table.chain.head,
            totals=list(table.flow.engine.totals) if table.flow.engine else [], seat=table.lobby.me,
            names=[p.name for p in table.lobby.players])
    assert table.lobby.me is not None  # (replay_seat refused a transcript without this seat)
    listeners = None
    try:  # seat i accepts links at its seating address (from seats < i, and the others' redials)
        _, port = lob.parse_addr(table.lobby.players[table.lobby.me].addr)
    except ValueError as exc:  # the host signed it: only a broken or hostile one writes that
        raise ResumeError(f"the seating gives this seat no port to listen on: {exc}") from None
    if table.lobby.me != 0:
        listeners = await trio.open_tcp_listeners(port, host=config.bind)
    else:
        listeners = await _host_mesh_listeners(port, config.bind)
    events.table_ready(table)
    relay = lob.parse_addr(saved["relay"]) if isinstance(saved.get("relay"), str) else None
    return await nd.run_seat(table, listeners, events, transcript_path=config.transcript,
                             timeouts=config.timeouts, keep_identity="identity" in saved,
                             kept=saved, jobs=tuple(jobs), mdns=config.mdns, reach=config.reach, relay=relay)
