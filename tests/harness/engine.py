"""Helpers for the engine tests (no tests here): scripted hands and an omniscient driver that
plays whole games with bots."""

from __future__ import annotations

from p2p_chinchon.bots.simple import SimpleBot
from p2p_chinchon.engine import (
    PRESETS,
    Close,
    Discard,
    DrawDiscard,
    DrawStock,
    Event,
    Game,
    Phase,
    Reenter,
    Restock,
    Rules,
    parse_cards,
)
from p2p_chinchon.rng import SeededRng


def shuffled(n: int, rng: SeededRng) -> list[int]:
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = rng.randbelow(i + 1)
        order[i], order[j] = order[j], order[i]
    return order


class Driver:
    """Runs a Game with every face known (a deck permutation per hand), bots choosing moves."""

    def __init__(self, rules: Rules, n: int, seed: int, dealer: int = 0) -> None:
        self.rng = SeededRng(seed)
        self.game = Game(rules, n, dealer)
        self.bots = [SimpleBot(rules, SeededRng(seed * 100 + k)) for k in range(n)]
        self.events: list = []
        self.cards = self.game.deck_cards()
        self.next_slot = 0
        self.perm: dict[int, int] = {}

    def reveal(self, slot: int) -> None:
        self.game.learn(slot, self.cards[self.perm[slot]])

    def start(self) -> None:
        g = self.game
        n = len(self.cards)
        order = shuffled(n, self.rng)
        self.perm = dict(enumerate(order))
        self.next_slot = n
        self.events += g.start_hand(n)
        for slots in g.hands.values():
            for s in slots:
                self.reveal(s)
        self.reveal(g.discard_pile[-1])

    def step(self) -> None:
        g = self.game
        if g.phase is Phase.DEAL:
            self.start()
        elif g.phase is Phase.RESTOCK:
            old = g.discard_pile[:-1]
            faces = [self.perm[s] for s in old]
            order = shuffled(len(faces), self.rng)
            new = tuple(range(self.next_slot, self.next_slot + len(faces)))
            self.next_slot += len(faces)
            for k, s in enumerate(new):
                self.perm[s] = faces[order[k]]
            self.events += g.apply(Restock(new))
        elif g.phase is Phase.DRAW:
            seat = g.to_play
            assert seat is not None                    # a turn is someone's
            hand = [g.faces[s] for s in g.hands[seat]]
            top = g.faces.get(g.discard_pile[-1]) if g.discard_pile else None
            choice = self.bots[seat].choose_draw(hand, top)
            ev = g.apply(DrawDiscard(seat) if choice == "discard" else DrawStock(seat))
            self.events += ev
            self.reveal(g.hands[seat][-1])
        elif g.phase is Phase.DISCARD:
            seat = g.to_play
            assert seat is not None                    # a turn is someone's
            legal = g.legal_actions(seat)
            may_close = any(isinstance(a, Close) for a in legal)
            hand = [g.faces[s] for s in g.hands[seat]]
            kind, card = self.bots[seat].choose_discard(hand, may_close)
            slot = next(s for s in g.hands[seat] if g.faces[s] == card)
            act = Close(seat, slot) if kind == "close" else Discard(seat, slot)
            assert act in legal
            self.events += g.apply(act)
        elif g.phase is Phase.SHOWDOWN:
            self.events += g.score_hand()
        elif g.phase is Phase.REENTRY:
            seat = g.pending_reentry[0]
            self.events += g.apply(Reenter(seat, True))

    def run(self, max_steps: int = 20000) -> None:
        for _ in range(max_steps):
            if self.game.phase is Phase.OVER:
                return
            self.step()
        raise AssertionError("game did not end")


def scripted_hand(game: Game, hands: dict, upcard, stock: list) -> list:
    """Start a hand in which seat s is dealt ``hands[s]`` (7 Cards), the upcard is ``upcard`` and
    the stock starts with ``stock``; the rest of the deck follows in canonical order. Every face
    is learned (an omniscient node). Returns the start_hand events."""
    plan = game.deal_plan()
    deck = list(game.deck_cards())
    faces: dict = {}
    for seat, slots in plan.items():
        assert len(hands[seat]) == 7
        faces.update(zip(slots, hands[seat], strict=True))
    faces[game.upcard_slot()] = upcard
    faces.update(zip(range(game.upcard_slot() + 1, len(deck)), stock, strict=False))
    taken = set(faces.values())
    assert len(taken) == len(faces), "a card is used twice"
    rest = iter(c for c in deck if c not in taken)
    for s in range(len(deck)):
        if s not in faces:
            faces[s] = next(rest)
    events = game.start_hand(len(deck))
    for s, c in faces.items():
        game.learn(s, c)
    return events


def phase(g: Game) -> Phase:
    """g's phase, read through a call: mypy keeps `g.phase` narrowed by an earlier assert
    across the calls that change it"""
    return g.phase


def pass_turn(game: Game, seat: int) -> list:
    """Draw from the stock and discard the drawn card."""
    ev = game.apply(DrawStock(seat))
    slot = game.hands[seat][-1]
    return ev + game.apply(Discard(seat, slot))


def slot_of(game: Game, seat: int, card) -> int:
    return next(s for s in game.hands[seat] if game.faces.get(s) == card)


def bust_scenario(rules: Rules, totals: list[int], dealer: int = 3,
                  reentries_used: list[int] | None = None) -> tuple[Game, list[Event]]:
    """Four seats; seat 3 closes in the second round scoring 1; seats 0, 1, 2 score 13, 11,
    11 (case G8). Returns the events of score_hand."""
    g = Game(rules, 4, first_dealer=dealer)
    g.totals[:] = totals
    if reentries_used is not None:
        g.reentries_used[:] = reentries_used  # re-entries used in earlier hands
    scripted_hand(g, {
        3: parse_cards("5-copas 5-espadas 5-bastos 6-copas 6-espadas 6-bastos 1-copas"),
        0: parse_cards("rey-oros rey-copas rey-espadas 2-copas 3-espadas 7-bastos 1-espadas"),
        1: parse_cards("caballo-oros caballo-copas caballo-espadas 2-espadas 4-bastos 3-copas 2-oros"),
        2: parse_cards("sota-oros sota-copas sota-espadas 4-oros 3-oros 1-bastos 3-bastos"),
    }, upcard=parse_cards("7-oros")[0], stock=parse_cards("sota-bastos caballo-bastos rey-bastos 7-copas 7-espadas "
                                       "4-copas 4-espadas 5-oros"))
    for seat in (0, 1, 2, 3, 0, 1, 2):
        pass_turn(g, seat)
    g.apply(DrawStock(3))
    g.apply(Close(3, g.hands[3][-1]))
    return g, g.score_hand()


def restock_scenario(last4: list) -> tuple:
    """Two players pass (draw from the stock, discard it) until the stock is empty; the last
    four discards are ``last4``. Returns (game, events, seat to play)."""
    g = Game(PRESETS["classic"], 2, first_dealer=1)
    wanted = set(last4)
    filler = [c for c in parse_cards("A♦ A♥ A♠ A♣ 2♣ 2♥ 2♠ 2♦ 3♦ 3♥ 3♠ 3♣ 4♦ 4♥ 4♠ 4♣ 5♦ 5♥ "
                                     "5♠ 5♣ 6♦ 6♥ 6♣ 6♠ J♥") if c not in wanted][:21]
    scripted_hand(g, {0: parse_cards("7♦ 7♥ 7♠ 7♣ J♦ Q♦ K♦"),
                      1: parse_cards("J♠ Q♠ K♠ J♣ Q♣ K♣ Q♥")},
                  upcard=parse_cards("K♥")[0], stock=filler + list(last4))
    events: list = []
    seat = 0
    while g.stock:
        events += pass_turn(g, seat)
        seat = 1 - seat
    return g, events, seat
