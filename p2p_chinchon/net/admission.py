"""Sans-I/O: the host's lobby decisions, which joiner is offered the table, seated or refused,
and when the table is full and its seating may be signed.

:class:`Admission` holds the host's table and the lobby's counts; :class:`.seating.HostLobby`
does the I/O (trio, the joiners' links) around it: it feeds each joiner's steps in (a join
request, the answer to the offer, the person's answer, the seat sent) and acts on what comes
out (a refusal to send, a seat to send, a lobby update to push, the seating to sign). No trio,
sockets or clocks here; the tests drive it with a table and requests only.
"""

from __future__ import annotations

import msgpack

from p2p_chinchon import table as tbl
from p2p_chinchon.net import joinrequest as lob
from p2p_chinchon.net.status import error_text

TABLE_FULL = "the table is full"
SIT = b"sit"  # the joiner's answer to the offer that accepts it (docs/protocol.md "Lobby")


class Admission:
    """The host's lobby for ``table`` (the host seated, nothing signed) with ``seats`` seats in
    all, the host's included.

    Counts, each an invariant the I/O keeps by calling the methods in order:
    ``seat_sends`` joiners were given a seat whose ``{seat}`` message is not sent yet (the
    seating waits for them: a ghost fails its send and frees its seat); ``told`` joiners
    heard how the lobby ended (the seating, or ``stop``); ``stop`` is why the seating could
    not be signed (None until then, and when it was)."""

    def __init__(self, table: tbl.Table, seats: int) -> None:
        self.table = table
        self.seats = seats
        self.seat_sends = 0
        self.told = 0
        self.stop: str | None = None

    def free(self) -> int:
        """Seats nobody holds yet (0 or less: the table is full)."""
        return self.seats - len(self.table.lobby.pending_players)

    def prompt_cap(self) -> int:
        """How many joiners may wait for the host's person at once: 2 per free seat, at least 1."""
        return max(1, 2 * self.free())

    def came_from(self, ip: str) -> int:
        """How many joiners (the host not counted) sit already from source address ``ip``."""
        return sum(1 for p in self.table.lobby.pending_players[1:] if _addr_host(p.addr) == ip)

    def may_sign(self) -> bool:
        """True once every seat is taken and every ``{seat}`` went out: sign the seating."""
        return self.free() <= 0 and not self.seat_sends

    def all_told(self) -> bool:
        """True once every joiner (``seats - 1`` of them) heard the seating or ``stop``."""
        return self.told >= self.seats - 1

    def lobby_message(self) -> bytes:
        """The unsigned lobby update, msgpack ``{"lobby": [{name, key}, ...]}`` in seat order
        (docs/protocol.md "Lobby updates")."""
        packed: bytes = msgpack.packb({"lobby": [{"name": p.name, "key": p.key} for p in self.table.lobby.pending_players]})
        return packed

    def first_sent(self) -> bytes | None:
        """What a joiner just seated counts as having seen already: the seats so far when the
        table is full (the seating follows at once, no update before it), else nothing."""
        return self.lobby_message() if self.free() <= 0 else None

    def update(self, sent: bytes | None) -> bytes | None:
        """The lobby update to push to a seated joiner that last got ``sent``; None when the
        seats are as it saw them."""
        now = self.lobby_message()
        return None if now == sent else now

    def on_request(self) -> str | None:
        """A join request came: the refusal to send (the table is full), or None: send the offer."""
        return TABLE_FULL if self.free() <= 0 else None

    @staticmethod
    def placed(peer_ip: str | None, req: lob.JoinRequest) -> tuple[str, str]:
        """``(seen, ip)`` for a joiner whose link comes from ``peer_ip`` (None: through the
        transit relay): ``seen`` the host:port the others most likely reach its mesh at (the
        source address with its listen port; through the relay its first candidate stands for
        it), ``ip`` the address its questions and limits go by (:data:`.lobby.RELAYED`
        through the relay). Raises ValueError for a request whose listen address is not
        host:port."""
        _, port = req.listen_host_port
        if peer_ip is not None:
            return lob.format_addr(peer_ip, port), peer_ip
        return (req.candidates[0] if req.candidates else lob.format_addr("127.0.0.1", port)), lob.RELAYED

    def on_answer(self, answer: bytes | None, key: bytes) -> tuple[bool, str | None]:
        """The joiner with identity ``key`` answered the offer with ``answer`` (None: its link
        closed): ``(go_on, refusal)``. ``(False, None)``: it declined, drop it silently;
        ``(False, text)``: refuse it with ``text`` (the table filled meanwhile, or the key is
        the host's own); ``(True, None)``: ask the host's person, or seat it."""
        if answer != SIT:
            return False, None
        if self.free() <= 0:
            return False, TABLE_FULL
        try:
            self.table.lobby.check_joiner_key(key)  # refused before the host's person is asked
        except tbl.IntentError as exc:
            return False, str(exc)
        return True, None

    def on_decision(self, refusal: str | None) -> str | None:
        """The host's person answered (``refusal``: the sentence for a joiner not let in, None
        for yes): the refusal to send, or None: seat it. A yes to a table that filled
        meanwhile is :data:`TABLE_FULL`."""
        if refusal is not None:
            return refusal
        return TABLE_FULL if self.free() <= 0 else None

    def take(self, req: lob.JoinRequest, seen: str) -> int | str:
        """Seat the joiner of ``req`` seen at ``seen`` (then its own signed candidates): its
        seat (and one more ``{seat}`` to send: :meth:`seat_sent` once it went or failed), or
        the refusal to send (a key or address the table cannot take). Errors other than the
        table's :class:`~p2p_chinchon.table.IntentError` propagate."""
        try:
            seat = self.table.lobby.seat_host(req.name, req.public_key, seen, req.candidates)
        except tbl.IntentError as exc:
            return str(exc)
        self.seat_sends += 1
        return seat

    def seat_sent(self) -> None:
        """A ``{seat}`` from :meth:`take` was sent or failed."""
        self.seat_sends -= 1

    def leave(self, key: bytes) -> None:
        """The seated joiner with identity ``key`` left before the seating: its seat is free."""
        self.table.lobby.unseat_host(key)

    def sign(self) -> None:
        """Sign the seating (and the host's agree when it auto-agrees); a table that cannot
        sets ``stop``, the refusal every joiner is sent."""
        try:
            self.table.start()
        except Exception as exc:  # noqa: BLE001 - the boundary: every joiner is told, one line
            self.stop = f"the host could not start the table: {error_text(exc)}"

    def heard_end(self, refused: bool) -> bool:
        """A joiner was sent the seating, or refused (``refused``): True when it counts as
        told (the seating, or any refusal once there is a ``stop``)."""
        if refused and self.stop is None:
            return False
        self.told += 1
        return True


def _addr_host(addr: str) -> str | None:
    try:
        return lob.parse_addr(addr)[0]
    except ValueError:
        return None
