"""The lobby: offer, seating, agree and the coin toss for the first dealer.

Owns the table's identity (game id, name, rules, proof rounds, host key), the players and the
host's pending seats. (docs/protocol.md "Table setup: rules, seating, coin toss")"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from p2p_chinchon import deck, engine, wire

from .common import (
    APP,
    DEFAULT_PROOF_ROUNDS,
    Commit,
    IntentError,
    Outbox,
    Player,
    ProtocolViolation,
    _clip_utf8,
    _h,
    rules_hash,
    seating_hash,
    toss_commitment,
)
from .state import Flow

if TYPE_CHECKING:
    from p2p_chinchon.identity import Identity
    from p2p_chinchon.rng import Rng

    from .hand import Hand
    from .view import EventLog


class Lobby:
    """The lobby part of :class:`~p2p_chinchon.table.Table`: who this seat is (``identity``,
    ``rng``, ``me``), the table's identity once the offer is in (``game``, ``table_name``,
    ``rules``, ``rules_wire``, ``max_seats``, ``proof_rounds``, ``offer_key`` = the host's
    key), the ``players`` of the signed seating (``pending``: the host's seats before it, or a
    joiner's provisional view of them), and the agree and toss (``toss_commits``,
    ``toss_nonces``, our ``my_toss_nonce``, ``agreed``: our person agreed). Every other part
    reads it; only the lobby changes it. ``hand`` (set by the table) starts the first hand
    once the toss names the first dealer."""

    hand: Hand

    def __init__(self, flow: Flow, out: Outbox, events: EventLog, identity: Identity | None, rng: Rng | None, *,
                 auto_agree: bool, min_proof_rounds: int) -> None:
        self.flow = flow
        self.out = out
        self.events = events
        self.identity = identity
        self.rng = rng
        self.auto_agree = auto_agree
        self.min_proof_rounds = min_proof_rounds
        self.me: int | None = None
        self.game = b""
        self.table_name = ""
        self.rules: engine.Rules | None = None
        self.rules_wire: dict[str, Any] = {}
        self.max_seats = 0
        self.proof_rounds = DEFAULT_PROOF_ROUNDS
        self.offer_key = b""
        self.players: list[Player] = []
        self.pending: list[Player] = []
        self.toss_commits: dict[int, bytes] = {}
        self.toss_nonces: dict[int, bytes] = {}
        self.my_toss_nonce = b""
        self.agreed = False

    def open_as_host(self, game: bytes, host: Player) -> None:
        """This seat opens the table as its host (seat 0): the game id it chose and its own
        player, the first of the pending seats (:meth:`Table.create`)."""
        self.me = 0
        self.game = game
        self.pending = [host]

    def agree(self) -> None:
        """This seat's person agreed to the table: the agree is signed in its turn
        (:meth:`auto_agree_body`)."""
        self.agreed = True

    def restore_toss_nonce(self, nonce: bytes) -> None:
        """A restarted seat's toss nonce, unless it has one already."""
        self.my_toss_nonce = self.my_toss_nonce or nonce

    def seat(self) -> int:
        """This seat's number. Raises :class:`RuntimeError` for an observer or before the
        seating (only this seat's own steps ask, and it has one then)."""
        if self.me is None:
            raise RuntimeError("this table has no seat of ours")
        return self.me

    def table_rules(self) -> engine.Rules:
        """The offer's rules. Raises :class:`RuntimeError` before the offer is in."""
        if self.rules is None:
            raise RuntimeError("no offer yet: the table's rules are not known")
        return self.rules

    def randomness(self) -> Rng:
        """This seat's source of randomness. Raises :class:`RuntimeError` for an observer."""
        if self.rng is None:
            raise RuntimeError("an observer has no randomness: it signs nothing")
        return self.rng

    def signing_key(self) -> Identity:
        """This seat's identity. Raises :class:`RuntimeError` for an observer."""
        if self.identity is None:
            raise RuntimeError("an observer has no identity: it signs nothing")
        return self.identity

    def name(self, seat: int | None) -> str:
        """The name of ``seat`` at the table ("seat N" for no seat of the seating)."""
        if seat is None or seat >= len(self.players):
            return f"seat {seat}"
        return self.players[seat].name

    def seat_host(self, name: str, key: bytes, addr: str, addrs: Iterable[str] = ()) -> int:
        """Host only: add a joiner (identity already checked by the lobby link) whose mesh
        listens at ``addr`` (the address the host saw it come from) and maybe at ``addrs`` (its
        other candidates, best first: advertised, then its interfaces). Returns its seat."""
        if self.me != 0 or self.players:
            raise IntentError("only the host may seat players, before the seating is signed")
        self.check_joiner_key(key)
        if any(p.key == key for p in self.pending):
            return next(i for i, p in enumerate(self.pending) if p.key == key)
        if len(self.pending) >= self.max_seats:
            raise IntentError("the table is full")
        if len(addr.encode()) > 64:
            raise IntentError("the joiner's address is too long")
        more: list[str] = []
        for a in addrs:  # the seating's addrs: distinct, not addr, each fits the wire
            if a != addr and a not in more and len(a.encode()) <= 64 and len(more) < wire.MAX_CANDIDATES:
                more.append(a)
        name = _clip_utf8(name, 29) or "?"
        taken = {p.name for p in self.pending}
        unique, n = name, 2
        while unique in taken:  # two "Ana"s at one table would be ambiguous in every log line
            unique, n = f"{name} {n}", n + 1
        self.pending.append(Player(unique, key, addr, tuple(more)))
        return len(self.pending) - 1

    def check_joiner_key(self, key: bytes) -> None:
        """Host only: raise IntentError for a joiner holding the host's own identity key (the
        same config folder on one computer): one player cannot take two seats."""
        if self.pending and key == self.pending[0].key:
            raise IntentError("that is the host's own identity key: one player cannot take two seats")

    def unseat_host(self, key: bytes) -> None:
        """Host only, before the seating: the joiner with identity ``key`` left the lobby; its
        seat is free again (the seats after it move up one)."""
        if self.me != 0 or self.players:
            raise IntentError("only the host may unseat players, before the seating is signed")
        self.pending = [p for i, p in enumerate(self.pending) if i == 0 or p.key != key]

    def set_host_name(self, name: str) -> None:
        """Host only, before the seating: the host's own name at the table."""
        self.pending[0].name = _clip_utf8(name, 32) or "host"

    def set_lobby_players(self, players: Iterable[tuple[str, bytes]]) -> None:
        """Joiner only, before the seating: who sits so far, from the host's unsigned lobby
        update, ``((name, 32-byte key), ...)`` in seat order (docs/protocol.md "Lobby updates").
        Display only: the view (:meth:`TableView.view <p2p_chinchon.table.view.TableView.view>`) shows them as provisional seats; the signed seating
        replaces them. Raises :class:`IntentError` after the seating, for more players than
        the offer's ``max_seats``, or for a first player who is not the offer's host."""
        if self.players or not self.max_seats:
            raise IntentError("lobby updates come after the offer and before the seating")
        players = list(players)
        if len(players) > self.max_seats:
            raise IntentError(f"the host's lobby update lists {len(players)} players for {self.max_seats} seats")
        if players and players[0][1] != self.offer_key:
            raise IntentError("the host's lobby update does not put the host in seat 0")
        self.pending = [Player(name, key, "") for name, key in players]

    @property
    def pending_players(self) -> list[Player]:
        """Host only: the players seated so far (the host first), before the seating is signed."""
        return list(self.pending)

    def seating_body(self) -> dict[str, Any]:
        """Host only: the ``seating`` of the players seated so far (at least 2), to sign.
        Raises :class:`IntentError` for fewer."""
        players = self.pending_players
        if len(players) < 2:
            raise IntentError("a table needs at least two players")
        return {"players": [{"name": p.name, "key": p.key, "addr": p.addr, "addrs": list(p.addrs)}
                            for p in players]}

    def handle_offer(self, env: wire.Envelope) -> Commit:
        b = env.body
        if b.get("app") != APP:
            raise ProtocolViolation(0, "malformed", "not a p2p-chinchon offer", 0)
        try:
            rules = engine.Rules.from_wire(b["rules"])
        except Exception as exc:  # RulesError
            raise ProtocolViolation(0, "bad_rules", str(exc), 0) from None
        if b["proof_rounds"] != rules.shuffle_proof_rounds:
            raise ProtocolViolation(0, "bad_rules", "offer's proof_rounds differs from its rules' shuffle_proof_rounds", 0)
        too_big = deck_too_big(rules, b["max_seats"])
        if too_big is not None:
            raise ProtocolViolation(0, "bad_rules", too_big, 0)
        if not (1 <= b["proof_rounds"] <= deck.MAX_K):
            raise ProtocolViolation(0, "bad_rules", "proof_rounds out of range", 0)
        if b["proof_rounds"] < self.min_proof_rounds:
            raise ProtocolViolation(0, "weak_proofs", f"the table's shuffle proofs use k = {b['proof_rounds']} "
                                    f"rounds; this seat requires at least {self.min_proof_rounds}", 0)

        def commit() -> None:
            self.game = env.game
            self.table_name = b["name"]
            self.rules = rules
            self.rules_wire = dict(b["rules"])
            self.max_seats = b["max_seats"]
            self.proof_rounds = b["proof_rounds"]
            self.offer_key = b["host_key"]
            self.flow.expect("seating", (0,))
            self.events.event("opened", detail=b["name"])

        return commit

    def on_seating(self, env: wire.Envelope) -> Commit:
        players = env.body["players"]
        if not (2 <= len(players) <= self.max_seats):
            raise ProtocolViolation(0, "bad_seating", f"{len(players)} players for {self.max_seats} seats", env.seq)
        keys = [p["key"] for p in players]
        if len(set(keys)) != len(keys):
            raise ProtocolViolation(0, "bad_seating", "one key in two seats", env.seq)
        if keys[0] != self.offer_key:
            raise ProtocolViolation(0, "bad_seating", "seat 0 is not the host", env.seq)

        def commit() -> None:
            self.flow.done("seating")
            self.players = [Player(p["name"], p["key"], p["addr"], tuple(p["addrs"])) for p in players]
            if self.identity is not None:
                mine = [i for i, p in enumerate(self.players) if p.key == self.identity.public_bytes]
                self.me = mine[0] if mine else None
            self.flow.expect("agree", range(len(players)))
            self.flow.expect("toss", range(len(players)))
            self.events.event("seating", tuple(range(len(self.players))),
                           fingerprints=tuple(p.fingerprint for p in self.players))

        return commit

    def on_agree(self, env: wire.Envelope) -> Commit:
        b = env.body
        if b["rules_hash"] != rules_hash(self.rules_wire, self.proof_rounds):
            raise ProtocolViolation(env.seat, "disagree", "agreed to different rules", env.seq)
        if b["seating_hash"] != self.seating_hash():
            raise ProtocolViolation(env.seat, "disagree", "agreed to a different seating", env.seq)

        def commit() -> None:
            self.flow.done("agree")
            self.toss_commits[env.seat] = b["toss_commit"]
            self.events.event("agreed", (env.seat,))

        return commit

    def on_toss(self, env: wire.Envelope) -> Commit:
        nonce = env.body["nonce"]
        if toss_commitment(self.game, env.seat, nonce) != self.toss_commits.get(env.seat):
            raise ProtocolViolation(env.seat, "toss", "toss nonce does not open the commitment", env.seq)

        def commit() -> None:
            self.flow.done("toss")
            self.toss_nonces[env.seat] = nonce
            if len(self.toss_nonces) == len(self.players):
                seed = _h(b"p2p-chinchon/first-dealer/v1", self.game,
                          *[self.toss_nonces[s] for s in range(len(self.players))])
                first = int.from_bytes(seed, "big") % len(self.players)
                self.flow.engine = engine.Game(self.table_rules(), len(self.players), first)
                self.events.event("first_dealer", (first,))
                self.hand.first_hand()

        return commit

    def seating_hash(self) -> bytes:
        return seating_hash([{"name": p.name, "key": p.key, "addr": p.addr} for p in self.players])

    def auto_agree_body(self) -> dict[str, Any] | None:
        if not (self.agreed or self.auto_agree):
            return None
        self.my_toss_nonce = self.my_toss_nonce or self.randomness().token_bytes(32)
        return {
            "rules_hash": rules_hash(self.rules_wire, self.proof_rounds),
            "seating_hash": self.seating_hash(),
            "toss_commit": toss_commitment(self.game, self.seat(), self.my_toss_nonce),
        }

    def auto_toss(self) -> dict[str, Any]:
        return {"nonce": self.my_toss_nonce}


def deck_too_big(rules: engine.Rules, seats: int) -> str | None:
    """Why a table of ``seats`` under ``rules`` cannot be played (its deck has more cards than a
    ``shuffle`` envelope carries, :data:`p2p_chinchon.wire.MAX_CARDS`), or None. The cap is the
    largest deck the rules build (two packs of 52 with their jokers, 108 cards), so this guards
    a future rules field, not a table the rules describe today."""
    try:
        n = len(rules.deck(seats))
    except engine.RulesError as exc:
        return str(exc)
    if n > wire.MAX_CARDS:
        return f"a deck of {n} cards for {seats} players: the protocol carries at most {wire.MAX_CARDS}"
    return None
