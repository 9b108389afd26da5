"""The lobby runners: seating a table before its game, host side and joiner side.

:func:`host_lobby` accepts joiners on the host's lobby listener until every seat is taken (a
person approving each one, or first come first seated), sends every seated joiner the lobby
updates, signs the seating and hands it out; :func:`join_lobby` sits one joiner down at a host
(:func:`_connect_patiently` keeps trying a host not up yet). Both speak the lobby protocol of
:mod:`.lobby` (TLS link, signed join request, opaque frames after it; docs/protocol.md
"Lobby") and hand the seated table to the node (:func:`.node.run_seat`), which builds the mesh
from the signed seating's places (:func:`peers_of`).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any

import msgpack
import trio

from p2p_chinchon import table as tbl
from p2p_chinchon.net import lobby as lob
from p2p_chinchon.net.framing import FrameError
from p2p_chinchon.net.mesh import PeerAddr
from p2p_chinchon.net.status import error_text

log = logging.getLogger(__name__)

TABLE_FULL = "the table is full"
LOBBY_RETRY = 0.2  # seconds between tries at a host not up yet (a refused connect costs nothing)
LOBBY_RETURN = 120.0  # s a seated joiner waits for a host whose lobby closed (crashed) to open again
CLOSED_BEFORE_SEATING = "the host closed the lobby before seating"
_LINK_ERRORS = (FrameError, trio.BrokenResourceError, trio.ClosedResourceError)


def peers_of(table: tbl.Table) -> dict[int, PeerAddr]:
    """Every seat's place in the signed seating: its ``addr`` (the address the host saw it
    from), then its other candidates (``addrs``: advertised, then private), best first."""
    out = {}
    for i, p in enumerate(table.lobby.players):
        places = []
        for a in (p.addr, *p.addrs):
            try:
                places.append(lob.parse_addr(a))
            except ValueError:  # a bad place costs nothing: the others are still dialled
                log.warning("seat %d's address %r in the seating is not host:port", i, a)
        if not places:  # only a broken or hostile host signs that; we never dial ourselves
            if i != table.lobby.me:
                raise lob.BadAnswer(f"the host's seating gives seat {i} ({p.name}) no address to reach it at: "
                                    f"{p.addr!r} is not host:port")
            places = [("127.0.0.1", 1)]
        out[i] = PeerAddr(*places[0], p.key, tuple(places[1:]))
    return out


async def host_lobby(
    table: tbl.Table,
    listener: Any,
    *,
    seats: int,
    on_seated: Callable[[tbl.Table, int | None, str], Any] | None = None,
    approve: Callable[..., Awaitable[bool | str]] | None = None,
    notice: Callable[[str, str, dict[str, Any]], Any] | None = None,
    approval_wait: float = lob.APPROVAL_WAIT,
    limit_loopback: bool = False,
    task_status: Any = trio.TASK_STATUS_IGNORED,
) -> None:
    """Host side: accept joiners on ``listener`` until ``seats`` players sit, then sign the
    seating and hand every joiner the offer and the seating. Returns when all are told.

    ``approve(request, source_ip, *, came, queued)`` (a person asked; None = open, first-come
    seating) returns True, False or :data:`.lobby.REFUSE_ADDRESS` before a joiner who accepted
    the offer is seated; ``came`` is how many sit already from that address, ``queued`` how
    many wait behind. The questions go one at a time through a :class:`.lobby.PromptQueue`: at
    most 2 per free seat wait, each for ``approval_wait`` s at most, and one whose joiner
    leaves is withdrawn. Without ``approve`` at most 2 joiners from one address are in the
    lobby at once (loopback too when ``limit_loopback``); with it, the person decides.

    From the joiner's "sit" to the signed seating one guard holds: a joiner whose link closes
    or whose send fails is unseated at once and ``notice(text, key, fields)`` says so (one line
    for the host's person: English ``text``, :mod:`p2p_chinchon.i18n` ``key`` and
    ``fields``), as it says an expired question or a refused address. ``on_seated(table,
    seat, name)`` after a joiner sits, and ``(table, None, name)`` when a seated joiner leaves
    before the seating: its seat is free again. Every seated joiner is sent the unsigned
    ``{"lobby": [{name, key}, ...]}`` after each such change (docs/protocol.md "Lobby
    updates"). An error seating one joiner refuses that joiner (logged in one line); a table
    that cannot sign its seating refuses every joiner and raises :class:`.lobby.LobbyError`."""
    told = 0
    done_one = trio.Event()
    started = trio.Event()
    stop: list[str] = []  # why the seating could not be signed: every joiner is told
    seat_sends = 0  # {seat} messages being sent: the seating waits for them (a ghost fails one)
    changed = trio.Event()  # set (and replaced) whenever a seat is taken or freed

    def free() -> int:
        return seats - len(table.lobby.pending_players)

    def seats_changed() -> None:
        nonlocal changed
        changed.set()
        changed = trio.Event()

    def say(key: str, text: str, **fields: Any) -> None:
        log.info("lobby: %s", text)
        if notice is not None:
            notice(text, key, fields)

    def lobby_message() -> bytes:
        packed: bytes = msgpack.packb({"lobby": [{"name": p.name, "key": p.key} for p in table.lobby.pending_players]})
        return packed

    async def ask(request: lob.JoinRequest, ip: str, **kw: Any) -> bool | str:
        assert approve is not None
        answer = await approve(request, ip, **kw)
        if answer == lob.REFUSE_ADDRESS:
            say("lobby_address_refused", f"everyone from {ip} is refused until the table starts", address=ip)
        return answer

    prompts = None if approve is None else lob.PromptQueue(ask, cap=lambda: max(1, 2 * free()), wait=approval_wait)

    def came_from(ip: str) -> int:
        return sum(1 for p in table.lobby.pending_players[1:] if _addr_host(p.addr) == ip)

    async def refuse(link: Any, text: str) -> None:
        await link.send(msgpack.packb({"error": text}))

    async def on_join(req: lob.JoinRequest, link: Any) -> None:
        try:
            await sit_down(req, link)
        except (lob.LobbyError, *_LINK_ERRORS):
            raise  # the joiner's link failed: serve_lobby logs it
        except Exception as exc:  # noqa: BLE001 - the boundary: one joiner refused, one line, no traceback
            log.error("lobby: could not seat %r: %s", req.name, error_text(exc))
            log.debug("lobby: seating %r failed", req.name, exc_info=True)
            with trio.move_on_after(5):
                await refuse(link, "the host could not seat you")

    async def sit_down(req: lob.JoinRequest, link: Any) -> None:
        nonlocal told
        if free() <= 0:
            await refuse(link, TABLE_FULL)
            return
        peer_ip = _peer_ip(link)
        _, port = req.listen_host_port
        # through the relay the joiner's first candidate stands for the address it came from
        seen = lob.format_addr(peer_ip, port) if peer_ip is not None else (
            req.candidates[0] if req.candidates else lob.format_addr("127.0.0.1", port))
        peer_ip = peer_ip or lob.RELAYED
        # The joiner reads the offer first and sits down only if it accepts it (rules, k, host
        # key), so a refusal never leaves a seat taken by someone who has gone.
        await link.send(msgpack.packb({"offer": table.ledger.frames[0]}))
        with trio.move_on_after(30):
            answer = await link.receive()
        if answer != b"sit":
            return
        if free() <= 0:
            await refuse(link, TABLE_FULL)
            return
        try:
            table.lobby.check_joiner_key(req.public_key)  # refused before the host's person is asked
        except tbl.IntentError as exc:
            await refuse(link, str(exc))
            return
        name = req.name
        seated = False
        left = False
        refusal: str | None = None
        sending = trio.Lock()  # held while a lobby update is sent: the seating never cancels one

        async def push() -> None:
            # docs/protocol.md "Lobby updates": the seats so far after our {seat} (unless the
            # seating follows at once: the table is full), then after every change
            sent = lobby_message() if free() <= 0 else None
            while not started.is_set():
                event, now = changed, lobby_message()
                if now != sent:
                    async with sending:
                        await link.send(now)
                    sent = now
                await event.wait()

        async def take_seat() -> str | None:
            # the refusal to send, or None once the seating is signed with this joiner in it
            nonlocal name, seated, seat_sends
            if prompts is not None:
                why, text = await prompts.decide(req, peer_ip, came=came_from(peer_ip))
                if why == "expired":
                    say("lobby_prompt_expired", f"nobody answered {req.name} within {approval_wait:g} s: "
                        "the request expired", name=req.name, s=f"{approval_wait:g}")
                if text is not None:
                    return text
                if free() <= 0:
                    return TABLE_FULL
            try:
                # observed first (the address the others can most likely reach), then the
                # joiner's own signed candidates: advertised, then its interfaces
                seat = table.lobby.seat_host(req.name, req.public_key, seen, req.candidates)
            except tbl.IntentError as exc:
                return str(exc)
            name, seated = table.lobby.pending_players[seat].name, True
            if on_seated is not None:  # before any await: the count it shows is this seating's
                on_seated(table, seat, name)
            seat_sends += 1
            try:
                await link.send(msgpack.packb({"seat": seat}))
            finally:
                seat_sends -= 1
                seats_changed()
            watch.start_soon(push_while_up)
            await started.wait()
            return stop[0] if stop else None

        async def push_while_up() -> None:
            nonlocal left
            try:
                await push()
            except _LINK_ERRORS:
                if not started.is_set():  # the joiner went away
                    left = True
                    watch.cancel_scope.cancel()

        async with trio.open_nursery() as watch:
            async def gone() -> None:
                # a joiner says nothing more in the lobby: a read that ends means it left
                nonlocal left
                try:
                    await link.receive()
                except _LINK_ERRORS:
                    pass
                if not started.is_set():  # after it, the game's clocks take over
                    left = True
                    watch.cancel_scope.cancel()

            watch.start_soon(gone)
            try:
                refusal = await take_seat()
            except _LINK_ERRORS:
                left = True  # a send failed: the joiner is gone
            finally:
                if seated and not started.is_set():  # the guard: no ghost keeps a seat
                    table.lobby.unseat_host(req.public_key)
                    seats_changed()
                    if on_seated is not None:
                        on_seated(table, None, name)
            async with sending:  # never cancel a send half-way: that would break the TLS link
                watch.cancel_scope.cancel()
        if left:
            say("lobby_left_early", f"{name} left before sitting down", name=name)
            return
        if refusal is not None:
            await refuse(link, refusal)
            if stop:  # counted: the host waits for every joiner to hear why
                told += 1
                done_one.set()
            return
        await link.send(msgpack.packb({"seating": table.ledger.frames[1]}))
        told += 1
        done_one.set()

    async with trio.open_nursery() as nursery:
        await nursery.start(partial(lob.serve_lobby, listener, on_join, identity=table.lobby.identity,
                                    max_per_address=2 if approve is None else None,
                                    limit_loopback=limit_loopback))
        task_status.started()
        while free() > 0 or seat_sends:  # a {seat} still being sent may yet fail
            await changed.wait()
            # a joiner that just left frees its seat first; the others' lobby updates start
            await trio.sleep(0)
        try:
            table.start()  # signs the seating (and the host's agree when it auto-agrees)
        except Exception as exc:  # noqa: BLE001 - the boundary: every joiner is told, one line
            stop.append(f"the host could not start the table: {error_text(exc)}")
        started.set()
        # wait until every joiner got the seating (or a short grace for dead links)
        with trio.move_on_after(10):
            while told < seats - 1:
                await done_one.wait()
                done_one = trio.Event()
        nursery.cancel_scope.cancel()
    if stop:
        raise lob.LobbyError(stop[0])


def _addr_host(addr: str) -> str | None:
    try:
        return lob.parse_addr(addr)[0]
    except ValueError:
        return None


def _peer_ip(link: Any) -> str | None:
    """The IP address a lobby link comes from; None through the transit relay (the relay's
    address says nothing of where the joiner is)."""
    stream = getattr(link, "stream", None) or getattr(link, "_stream", None)
    stream = getattr(stream, "transport_stream", stream)  # under TLS, the socket is below
    if getattr(stream, "relay", None) is not None:
        return None
    sock = getattr(stream, "socket", None)
    try:
        return sock.getpeername()[0] if sock is not None else "127.0.0.1"
    except OSError:
        return "127.0.0.1"


async def join_lobby(
    identity: Any, host: str, port: int, *, name: str, listen_port: int, timeout: float = 600.0,
    candidates: Sequence[str] = (),
    check_offer: Callable[[bytes, bytes], Any] | None = None, expect_fingerprint: str | None = None,
    wait: float = 0.0, on_waiting: Callable[..., Any] | None = None,
    on_lobby: Callable[[tuple[tuple[str, bytes], ...]], Any] | None = None,
    approval_wait: float = lob.APPROVAL_WAIT, local_address: str | None = None,
    connect: Callable[..., Awaitable[tuple[Any, bytes]]] | None = None,
) -> tuple[bytes, bytes]:
    """Joiner side: sit down at ``host:port`` over TLS, pinning ``expect_fingerprint`` if
    given, offering ``candidates`` (more addresses of our mesh, best first) besides the one the
    host sees us from; returns the offer and seating frames. ``check_offer(offer_frame,
    host_tls_key)`` may refuse the table (raise) before we wait to be seated. Any hostile answer raises
    :class:`~.lobby.LobbyError` (:class:`~.lobby.Refused`, :class:`~.lobby.BadAnswer`). While
    nobody answers at ``host:port`` we keep trying for ``wait`` seconds, telling
    ``on_waiting(text)`` so; then the connection error (OSError) is raised. Once we sat down,
    ``on_waiting(text, key, fields)`` says we wait for the host's person (English ``text``, the
    same in :mod:`p2p_chinchon.i18n` as ``key`` with ``fields``). ``on_lobby(players)`` gets each of the
    host's unsigned lobby updates, ``((name, key), ...)`` in seat order (display only). After
    ``sit`` we wait ``approval_wait`` s (and 15 s more) for the seat: then :class:`~.lobby.Refused`.
    ``local_address``: the source IP to connect from (None: the system's choice).
    ``connect(**kwargs)``: how to reach the lobby instead (a code word's direct-then-relay
    way), taking :func:`.lobby.connect_lobby`'s keyword arguments after ``identity``.

    A joiner that was seated when the host's lobby closed (the host crashed, or left) says so
    and waits up to :data:`LOBBY_RETURN` s for it to open again (the host's same command: a
    new table, checked again by ``check_offer``), then sits down again; the host's key stays
    pinned when ``expect_fingerprint`` was given."""
    kwargs: dict[str, Any] = dict(name=name, listen_addr=lob.format_addr("0.0.0.0", listen_port),
                                  candidates=candidates, expect_fingerprint=expect_fingerprint)
    returning = False
    while True:
        seated: list[bool] = []
        try:
            return await _sit_once(identity, host, port, kwargs, timeout=timeout, check_offer=check_offer,
                                   wait=wait, on_waiting=on_waiting, on_lobby=on_lobby, approval_wait=approval_wait,
                                   local_address=local_address, connect=connect, seated=seated,
                                   returning=returning)
        except lob.Refused as exc:
            if not seated or str(exc) != CLOSED_BEFORE_SEATING:
                raise
        wait, returning = LOBBY_RETURN, True
        log.info("the host's lobby closed before seating: waiting up to %g s for it to open again", wait)
        if on_waiting is not None:
            on_waiting(f"the host's lobby closed before seating (it may have crashed): waiting up to {wait:g} s "
                       "for it to open again (the host runs the same command); q leaves",
                       "lobby_host_gone", {"s": f"{wait:g}"})


async def _sit_once(
    identity: Any, host: str, port: int, kwargs: dict[str, Any], *, timeout: float,
    check_offer: Callable[[bytes, bytes], Any] | None, wait: float, on_waiting: Callable[..., Any] | None,
    on_lobby: Callable[[tuple[tuple[str, bytes], ...]], Any] | None, approval_wait: float,
    local_address: str | None, connect: Callable[..., Awaitable[tuple[Any, bytes]]] | None, seated: list[bool],
    returning: bool = False,
) -> tuple[bytes, bytes]:
    """One visit of :func:`join_lobby` to the host's lobby; ``seated`` gets True once the host
    gave us a seat. ``returning``: the lobby closed on us; a TLS handshake that fails (a host
    restarting resets it) is tried again too until ``wait`` ran out, and so is one to a pinned
    host key (a rematch: the host's last game may reset us as it closes its listener there)."""
    pinned = kwargs.get("expect_fingerprint") is not None
    if connect is not None:
        link, host_key = await connect(identity, **kwargs)
    else:
        link, host_key = await _connect_patiently(wait, on_waiting, host, port, identity, **kwargs,
                                                  local_address=local_address,
                                                  retry=(lob.WrongHost,) if returning or pinned else ())
    async with link:
        offer = await lob.read_answer(link, "offer", bytes, closed="the host refused the join request")
        if check_offer is not None:
            check_offer(offer, host_key)  # raises: we leave without taking a seat
        await link.send(b"sit")
        if on_waiting is not None:  # never a silent wait: the host's person may be asked first
            on_waiting(f"waiting for the host to let you sit down (your fingerprint {identity.fingerprint}: the host "
                       f"checks it on their screen; up to {approval_wait:g} s; q leaves)", "lobby_wait_host",
                       {"s": f"{approval_wait:g}", "fp": identity.fingerprint})
        # The host refuses us when its person has not answered in APPROVAL_WAIT s; our own
        # patience ends a little later, for a host that never says.
        try:
            with trio.fail_after(approval_wait + 15):
                await lob.read_answer(link, "seat", int, closed="the host closed the lobby", on_lobby=on_lobby)
        except trio.TooSlowError:
            raise lob.Refused(f"the host did not answer within {approval_wait:g} s") from None
        seated.append(True)
        if on_waiting is not None:  # seated: the last line must not stay "waiting for the host"
            on_waiting(f"seated (your fingerprint {identity.fingerprint}): waiting for the table to fill",
                       "lobby_seated", {"fp": identity.fingerprint})
        with trio.fail_after(timeout):
            seating = await lob.read_answer(link, "seating", bytes, on_lobby=on_lobby,
                                            closed=CLOSED_BEFORE_SEATING)
        return offer, seating


async def _connect_patiently(wait: float, on_waiting: Callable[[str], Any] | None,
                             host: str, port: int, *args: Any, retry: tuple[type[Exception], ...] = (),
                             **kwargs: Any) -> Any:
    """:func:`lobby.connect_lobby`, retried every :data:`LOBBY_RETRY` s for ``wait`` seconds
    while the address refuses or does not answer (the host may start after us), hangs up before
    a lobby's challenge (:class:`~.lobby.Refused`: the host's last game still holds the port,
    its lobby not open yet, as at a rematch), or fails with one of ``retry``."""
    deadline = trio.current_time() + wait
    said = None
    while True:
        try:
            return await lob.connect_lobby(host, port, *args, timeout=min(10.0, max(1.0, wait)), **kwargs)
        except socket.gaierror:
            raise  # a name that does not resolve is a typo, not a host that is not up yet
        except Exception as exc:
            if not isinstance(exc, (OSError, trio.TooSlowError, lob.Refused, *retry)):
                raise
            left = deadline - trio.current_time()
            if left <= 0:
                if isinstance(exc, trio.TooSlowError):
                    raise OSError(f"no answer from {lob.format_addr(host, port)}") from None
                raise
            text = f"no table at {lob.format_addr(host, port)} yet: still trying for {int(left + 0.5)} s"
            if on_waiting is not None and text != said:
                on_waiting(text)
                said = text
            await trio.sleep(min(LOBBY_RETRY, left))
