"""The lobby runners: seating a table before its game, host side and joiner side.

:func:`host_lobby` accepts joiners on the host's lobby listener until every seat is taken (a
person approving each one, or first come first seated), sends every seated joiner the lobby
updates, signs the seating and hands it out; :func:`join_lobby` sits one joiner down at a host
(:func:`_connect_patiently` keeps trying a host not up yet). :func:`host_lobby` runs a
:class:`HostLobby` (the I/O: trio, the joiners' links, one :class:`_Joiner` each) whose every
decision is its :class:`.admission.Admission`'s (sans-I/O). The two runners speak the lobby protocol of
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
from p2p_chinchon.net.admission import TABLE_FULL as TABLE_FULL, Admission
from p2p_chinchon.net.framing import FrameError
from p2p_chinchon.net.mesh import PeerAddr
from p2p_chinchon.net.status import error_text

log = logging.getLogger(__name__)

OFFER_WAIT = 30.0  # s a joiner has to answer the offer ("sit") before the boundary refuses it
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
    that cannot sign its seating refuses every joiner and raises :class:`.lobby.LobbyError`.

    A thin runner of :class:`HostLobby` (the I/O) around :class:`.admission.Admission` (the
    decisions)."""
    lobby = HostLobby(table, seats=seats, on_seated=on_seated, approve=approve, notice=notice,
                      approval_wait=approval_wait)
    await lobby.run(listener, limit_loopback=limit_loopback, task_status=task_status)


class HostLobby:
    """The host's lobby at ``table`` (see :func:`host_lobby` for the arguments): the trio side
    of an :class:`.admission.Admission` (``admission``), which decides every step.

    Events, each set (and the first two replaced) by one party and awaited by another:
    ``changed`` whenever a seat is taken or freed (the runner and every joiner's lobby
    updates wait on it), ``done_one`` whenever a joiner counts as told, ``started`` once the
    seating is signed or ``admission.stop`` says why not. ``prompts`` asks the host's person
    (None: open seating)."""

    def __init__(self, table: tbl.Table, *, seats: int,
                 on_seated: Callable[[tbl.Table, int | None, str], Any] | None = None,
                 approve: Callable[..., Awaitable[bool | str]] | None = None,
                 notice: Callable[[str, str, dict[str, Any]], Any] | None = None,
                 approval_wait: float = lob.APPROVAL_WAIT) -> None:
        self.table = table
        self.admission = Admission(table, seats)
        self.on_seated = on_seated
        self.approve = approve
        self.notice = notice
        self.approval_wait = approval_wait
        self.changed = trio.Event()
        self.done_one = trio.Event()
        self.started = trio.Event()
        self.prompts = None if approve is None else lob.PromptQueue(self._ask, cap=self.admission.prompt_cap,
                                                                    wait=approval_wait)

    async def run(self, listener: Any, *, limit_loopback: bool = False,
                  task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        """Serve the lobby on ``listener`` (started once it listens) until every seat is taken,
        sign the seating, wait up to 10 s for every joiner to be told, close the lobby.
        Raises :class:`.lobby.LobbyError` when the seating could not be signed."""
        async with trio.open_nursery() as nursery:
            await nursery.start(partial(lob.serve_lobby, listener, self.on_join, identity=self.table.lobby.identity,
                                        max_per_address=2 if self.approve is None else None,
                                        limit_loopback=limit_loopback))
            task_status.started()
            while not self.admission.may_sign():  # a {seat} still being sent may yet fail
                await self.changed.wait()
                # a joiner that just left frees its seat first; the others' lobby updates start
                await trio.sleep(0)
            self.admission.sign()
            self.started.set()
            # wait until every joiner got the seating (or a short grace for dead links)
            with trio.move_on_after(10):
                while not self.admission.all_told():
                    await self.done_one.wait()
                    self.done_one = trio.Event()
            nursery.cancel_scope.cancel()
        if self.admission.stop is not None:
            raise lob.LobbyError(self.admission.stop)

    def seats_changed(self) -> None:
        """Wake everyone waiting on ``changed`` (a seat was taken or freed)."""
        self.changed.set()
        self.changed = trio.Event()

    def told(self, refused: bool) -> None:
        """A joiner was sent the seating or refused (``refused``): wake the runner if it counts."""
        if self.admission.heard_end(refused):
            self.done_one.set()

    def say(self, key: str, text: str, **fields: Any) -> None:
        """One line for the host's person: logged, and to ``notice(text, key, fields)``."""
        log.info("lobby: %s", text)
        if self.notice is not None:
            self.notice(text, key, fields)

    async def _ask(self, request: lob.JoinRequest, ip: str, **kw: Any) -> bool | str:
        """The :class:`.lobby.PromptQueue`'s question: ``approve``, and a line when it
        refuses the whole address."""
        assert self.approve is not None
        answer = await self.approve(request, ip, **kw)
        if answer == lob.REFUSE_ADDRESS:
            self.say("lobby_address_refused", f"everyone from {ip} is refused until the table starts", address=ip)
        return answer

    async def on_join(self, req: lob.JoinRequest, link: Any) -> None:
        """:func:`.lobby.serve_lobby`'s handler of one verified join request: seat the joiner.
        Link and lobby errors propagate (serve_lobby logs them); any other error refuses this
        joiner only ("the host could not seat you"), logged in one line."""
        try:
            await self.sit_down(req, link)
        except (lob.LobbyError, *_LINK_ERRORS):
            raise  # the joiner's link failed: serve_lobby logs it
        except Exception as exc:  # noqa: BLE001 - the boundary: one joiner refused, one line, no traceback
            log.error("lobby: could not seat %r: %s", req.name, error_text(exc))
            log.debug("lobby: seating %r failed", req.name, exc_info=True)
            with trio.move_on_after(5):
                await _refuse(link, "the host could not seat you")

    async def sit_down(self, req: lob.JoinRequest, link: Any) -> None:
        """One joiner from its request to the end of the lobby: ``{offer}``, its ``sit``
        within :data:`OFFER_WAIT` s (else RuntimeError: the boundary refuses it), then
        :class:`_Joiner` seats it; last the seating, or ``{error}`` with the refusal, or
        nothing to a joiner that declined or left (a line says it left)."""
        refusal = self.admission.on_request()
        if refusal is not None:
            await _refuse(link, refusal)
            return
        seen, ip = self.admission.placed(_peer_ip(link), req)
        # The joiner reads the offer first and sits down only if it accepts it (rules, k, host
        # key), so a refusal never leaves a seat taken by someone who has gone.
        await link.send(msgpack.packb({"offer": self.table.chain.frames[0]}))
        answer: bytes | None = None
        with trio.move_on_after(OFFER_WAIT) as waited:
            answer = await link.receive()
        if waited.cancelled_caught:
            raise RuntimeError(f"no answer to the offer within {OFFER_WAIT:g} s")
        go_on, refusal = self.admission.on_answer(answer, req.public_key)
        if not go_on:
            if refusal is not None:
                await _refuse(link, refusal)
            return
        joiner = _Joiner(self, req, link, seen, ip)
        refusal = await joiner.run()
        if joiner.left:
            self.say("lobby_left_early", f"{joiner.name} left before sitting down", name=joiner.name)
            return
        if refusal is not None:
            await _refuse(link, refusal)
            self.told(refused=True)  # counted once there is a stop: every joiner hears why
            return
        await link.send(msgpack.packb({"seating": self.table.chain.frames[1]}))
        self.told(refused=False)


class _Joiner:
    """One joiner of a :class:`HostLobby` from its ``sit`` to the end of the lobby: asked
    about, seated, sent lobby updates, and watched (a link that closes, a send that fails:
    ``left``) until the seating; ``seen``/``ip`` as :meth:`.admission.Admission.placed`.

    The guard: while ``seated`` and the seating not signed, a joiner gone is unseated at once.
    ``sending`` is held while a lobby update is sent: the lobby's end never cancels one."""

    _watch: trio.Nursery  # the joiner's tasks (take_seat's caller, gone, push_while_up)

    def __init__(self, lobby: HostLobby, req: lob.JoinRequest, link: Any, seen: str, ip: str) -> None:
        self.lobby = lobby
        self.req = req
        self.link = link
        self.seen = seen
        self.ip = ip
        self.name = req.name  # the table's unique name once seated
        self.seated = False
        self.left = False
        self.sending = trio.Lock()

    async def run(self) -> str | None:
        """Seat and watch the joiner until the lobby ends: the refusal to send it (None: the
        seating, or nothing when ``left``)."""
        lobby = self.lobby
        refusal = None
        async with trio.open_nursery() as self._watch:
            self._watch.start_soon(self.gone)
            try:
                refusal = await self.take_seat()
            except _LINK_ERRORS:
                self.left = True  # a send failed: the joiner is gone
            finally:
                if self.seated and not lobby.started.is_set():  # the guard: no ghost keeps a seat
                    lobby.admission.leave(self.req.public_key)
                    lobby.seats_changed()
                    if lobby.on_seated is not None:
                        lobby.on_seated(lobby.table, None, self.name)
            async with self.sending:  # never cancel a send half-way: that would break the TLS link
                self._watch.cancel_scope.cancel()
        return refusal

    async def take_seat(self) -> str | None:
        """Ask the host's person (if any), seat the joiner, send ``{seat}``, wait for the end
        of the lobby: the refusal to send, or None once the seating is signed with it in it.
        Link errors propagate (the joiner is gone)."""
        lobby, admission, req = self.lobby, self.lobby.admission, self.req
        if lobby.prompts is not None:
            why, text = await lobby.prompts.decide(req, self.ip, came=admission.came_from(self.ip))
            if why == "expired":
                lobby.say("lobby_prompt_expired", f"nobody answered {req.name} within {lobby.approval_wait:g} s: "
                          "the request expired", name=req.name, s=f"{lobby.approval_wait:g}")
            refusal = admission.on_decision(text)
            if refusal is not None:
                return refusal
        # observed first (the address the others can most likely reach), then the joiner's
        # own signed candidates: advertised, then its interfaces
        seat = admission.take(req, self.seen)
        if isinstance(seat, str):
            return seat
        self.name, self.seated = lobby.table.lobby.pending_players[seat].name, True
        try:  # from take to seat_sent, the seating waits for this {seat}
            if lobby.on_seated is not None:  # before any await: the count it shows is this seating's
                lobby.on_seated(lobby.table, seat, self.name)
            await self.link.send(msgpack.packb({"seat": seat}))
        finally:
            admission.seat_sent()
            lobby.seats_changed()
        self._watch.start_soon(self.push_while_up)
        await lobby.started.wait()
        return admission.stop  # the refusal to send, or None: the seating

    async def push(self) -> None:
        """docs/protocol.md "Lobby updates": the seats so far after our ``{seat}`` (unless the
        seating follows at once: the table is full), then after every change, until the
        lobby ends. Link errors propagate."""
        lobby = self.lobby
        sent = lobby.admission.first_sent()
        while not lobby.started.is_set():
            event, now = lobby.changed, lobby.admission.update(sent)
            if now is not None:
                async with self.sending:
                    await self.link.send(now)
                sent = now
            await event.wait()

    async def push_while_up(self) -> None:
        """:meth:`push`; a send that fails before the seating means the joiner left."""
        try:
            await self.push()
        except _LINK_ERRORS:
            self._left_early()

    async def gone(self) -> None:
        """Wait for the link to close: a joiner says nothing more in the lobby, so a read
        that ends means it left (before the seating; after it, the game's clocks take over)."""
        try:
            await self.link.receive()
        except _LINK_ERRORS:
            pass
        self._left_early()

    def _left_early(self) -> None:
        if not self.lobby.started.is_set():
            self.left = True
            self._watch.cancel_scope.cancel()


async def _refuse(link: Any, text: str) -> None:
    await link.send(msgpack.packb({"error": text}))


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
