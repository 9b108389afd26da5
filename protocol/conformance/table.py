"""The table: who speaks next and what every envelope must satisfy ("Message flow",
"Messages", "Table setup", "Hands", "The deck"), as an observer that can also hold one seat's
secrets.  `Table.apply(env)` checks an envelope completely before it changes any state; a
violation raises Violation(rule, seat).  `Table.expected()` names the next speaker and kinds.
"""
from __future__ import annotations

import copy
from typing import NoReturn

import crypto as cr
import engine as en
import wire

BOT_CLOSE_MAX = 5


class Violation(Exception):
    def __init__(self, rule: str, seat: int, reason: str = ""):
        super().__init__(f"seat {seat}: {rule}: {reason}")
        self.rule, self.seat, self.reason = rule, seat, reason


class Hand:
    """one hand's state, set by Table._start_hand and the steps after it (an attribute not set
    yet is not there: `retired` until the first reshuffle)"""
    A: list[int]                          # the seats in the hand
    order: list[int]
    shuffle_order: list[int]
    ctx: dict[int, bytes]
    kc: dict[int, bytes]
    Y: dict[int, bytes]
    round: int
    deck: list[tuple[bytes, bytes]]
    slots: list[tuple[bytes, bytes]]
    shares: dict[int, dict[int, bytes]]
    faces: dict[int, int]
    hands: dict[int, list[int]]
    pile: list[int]
    stock: list[int]
    turn_i: int
    drawn: bool
    finished_turn: set[int]
    closer: int | None
    secrets: dict[int, int]
    digests: int
    shuffle_in: list[tuple[bytes, bytes]] | None
    shuffle_i: int
    x: int | None
    joint: bytes
    upcard: int
    retired: list[int]
    draw_slot: int
    draw_left: list[int]
    last_from_discard: int
    show_left: list[int]
    close_score: int
    chinchon: bool
    facedown: int
    scores: dict[int, int]
    offered: list[int]
    void: bool
    final: list[int]
    head: bytes
    knonce: bytes


class Table:
    # set by the offer or later (an attribute not set yet is not there)
    exp: tuple[int, set[str]] | None   # the next speaker and its kinds, None when the game is over
    hand_no: int
    h: Hand
    end_left: list[int]
    gone_now: list[int]

    def __init__(self, me: int | None = None):
        self.me = me                   # our seat, or None for an observer (audit)
        self.chain: list[wire.Envelope] = []
        self.phase = "offer"
        self.over = False
        self.winner: int | None = None
        self.hands_played = 0
        self.log: list[str] = []

    # -- helpers ---------------------------------------------------------------------------
    @property
    def head(self) -> bytes:
        return self.chain[-1].hash if self.chain else bytes(32)

    def key_of(self, seat: int) -> bytes:
        if self.phase in ("offer", "seating"):
            return self.offer["host_key"]
        return self.players[seat]["key"]

    def expected(self):
        """(seat, set of kinds) of the next envelope, or None when the game is over."""
        return self.exp

    # -- entry point -----------------------------------------------------------------------
    def apply(self, e: wire.Envelope) -> None:
        if e.seq != len(self.chain):
            raise Violation("seq", e.seat, f"seq {e.seq} at {len(self.chain)}")
        if e.prev != self.head:
            raise Violation("broken_chain", e.seat)
        if self.chain and e.game != self.game:
            raise Violation("wrong_game", e.seat)
        if self.phase not in ("offer",) and e.seat >= self.N_or_max():
            raise Violation("malformed", e.seat, "seat not seated")
        if e.kind == "away" and self.phase == "offer":
            raise Violation("unexpected", e.seat, "a chain starts with the host's offer")
        if not wire.verify_sig(e, self.key_of(e.seat) if self.phase != "offer" else e.body["host_key"]):
            raise Violation("bad_signature", e.seat)
        if e.kind == "away":             # a vote is never chained ("Removal", the vote): `unexpected`,
            raise Violation("unexpected", e.seat, "an away vote is never chained")   # after every envelope check
        if e.kind == "leave" and hasattr(self, "in_game") and not self.in_game[e.seat] \
                and e.seat not in self.left:
            self.left.add(e.seat)        # out of the game already: it just will not sign game_end
            if self.phase == "game_end":
                self.end_left = [s for s in self.end_left if s != e.seat]
                self.exp = (self.end_left[0], {"game_end"}) if self.end_left else None
            self.chain.append(e)
            return
        if e.kind in ("fault", "leave") and (e.seat in getattr(self, "removed", {}) or e.seat in getattr(self, "left", ())):
            # a seat removed, or gone home, may do nothing more ("Removal"): nobody is judged by it
            self.verdict = f"seat {e.seat}'s {e.kind} after it was out for good: judges nobody"
            self.removed_spoke = True
            self.chain.append(e)
            self.over = True
            self.exp = None
            self.log.append(self.verdict)
            return
        if e.kind in ("fault", "leave"):
            self.verdict = self.judge(e) if e.kind == "fault" else f"seat {e.seat} left: {e.body['reason']}"
            self.chain.append(e)
            self.over = True
            self.exp = None
            self.log.append(self.verdict)
            return
        if e.kind == "remove":
            self._atomically(e, self._remove, lambda ex: "bad_removal")
            self.chain.append(e)
            return
        if self.phase != "offer" and self.exp is not None:
            seat, kinds = self.exp
            if e.seat != seat:
                raise Violation("not_your_turn", e.seat, f"expected seat {seat}")
            if e.kind not in kinds:
                raise Violation("unexpected", e.seat, f"{e.kind}, expected {sorted(kinds)}")
        if "hand" in e.body and e.body["hand"] != self.hand_no:
            raise Violation("wrong_hand", e.seat)
        self._atomically(e, getattr(self, "_" + e.kind),
                         lambda ex: getattr(ex, "step", None) or getattr(ex, "rule", None) or "malformed")
        self.chain.append(e)

    def _atomically(self, e: wire.Envelope, step, rule_of) -> None:
        """run step(e); on any failure put the state back as it was, and raise a Violation
        by e's signer (rule_of(ex) names the rule of an error that is not one already)"""
        snapshot = copy.copy(self.__dict__)
        try:
            step(e)
        except Violation:
            self.__dict__.clear()
            self.__dict__.update(snapshot)
            raise
        except (cr.DeckError, en.RuleError, KeyError, IndexError, ValueError) as ex:
            self.__dict__.clear()
            self.__dict__.update(snapshot)
            raise Violation(rule_of(ex), e.seat, str(ex)) from ex

    def judge(self, f: wire.Envelope, at: int | None = None) -> str:
        """re-check a fault's evidence against the state at this point ("Faults and audit");
        at: the position of a quoted fault that raced the move our chain holds there"""
        b = f.body
        acc, rule = b["accused"], b["rule"]
        frames = []
        for raw in b["evidence"]:
            try:
                frames.append(wire.decode(raw))
            except wire.WireError:
                pass
        if at is None and acc == 255 and len(frames) == 1 and len(b["evidence"]) == 1:
            q = frames[0]   # a peer's fault that reached the signer after its chain moved on
            if (q.kind == "fault" and q.seat != f.seat and q.game == self.game and 0 < q.seq < len(self.chain)
                    and self.chain[q.seq].prev == q.prev and self.chain[q.seq].frame != q.frame
                    and q.seat < self.N and wire.verify_sig(q, self.players[q.seat]["key"])):
                return self.judge(q, at=q.seq)
        if len(frames) == 1 == len(b["evidence"]) and rule not in ("equivocation", "timeout") and \
                frames[0].seq < len(self.chain) and self.chain[frames[0].seq].frame == b["evidence"][0]:
            # the very envelope our chain holds: its shuffle proof passed when it was applied
            if rule in ("duplicate_card", "face_mismatch", "not_a_card", "bad_card") and frames[0].kind != "shuffle":
                return f"seat {f.seat} accuses seat {acc} (unverifiable): {rule}"
            return f"false_accusation by seat {f.seat}: the evidence is an envelope of the chain"
        signed = [x for x in frames if x.game == self.game and hasattr(self, "players")
                  and x.seat == acc and x.seat < self.N and wire.verify_sig(x, self.players[x.seat]["key"])]
        if rule == "equivocation":
            if len(signed) >= 2 and signed[0].seq == signed[1].seq and \
                    signed[0].signed_bytes() != signed[1].signed_bytes():
                return f"accused: seat {acc}: equivocation: confirmed"
            return f"false_accusation by seat {f.seat}"
        if rule == "timeout":
            if at is None:
                speaker = self.exp[0] if self.exp else None
            elif self.chain[at].kind in ("fault", "leave", "remove"):
                return f"seat {f.seat} accuses seat {acc} (unverifiable): {rule}"
            else:
                speaker = self.chain[at].seat   # it spoke there as the expected speaker
            if speaker == acc != f.seat:
                return f"accused: seat {acc}: timeout: consistent with the chain"
            return f"false_accusation by seat {f.seat}"
        if not signed:
            return f"seat {f.seat} accuses seat {acc} (unverifiable): {rule}"
        x = signed[0]
        probe = copy.deepcopy(self)
        probe.over = False
        try:
            probe.apply(x)
        except Violation as v:
            if v.seat in (acc, -1):
                return f"accused: seat {acc}: {rule}: confirmed ({v.rule})"
            return f"seat {f.seat} accuses seat {acc} (unverifiable): {rule}"
        return f"false_accusation by seat {f.seat}: the evidence is a valid move"

    def N_or_max(self):
        return self.N if hasattr(self, "N") else 1

    # -- removal ("Removal (a seat gone for good)") ------------------------------------------
    def removal_signers(self, X):
        """(signers of X's removal in seat order, N: the seats in the game) at this point: the
        seats of the seating not X, not left or removed, not being removed (rule 4: nested);
        N counted when the outermost removal in progress began"""
        busy = [r["X"] for r in self.removing]
        signers = [s for s in range(self.N) if s != X and s not in self.removed
                   and s not in self.left and s not in busy]
        if self.removing:
            n = self.removing[0]["N"]
        else:
            n = sum(1 for s in range(self.N) if s not in self.removed and s not in self.left)
        return signers, n

    def check_votes(self, e, X, signers, n):
        """rule 2 for `absent`: the proof is a strict majority's votes, each an `away` or the
        signed `leave` of a signer that left (None if it stands, else why not)"""
        b = e.body
        voters = set()
        own = False
        for raw in b["proof"]:
            try:
                v = wire.decode(raw)
            except wire.WireError as ex:
                return f"a vote does not decode ({ex.code})"
            if v.kind == "leave" and v.game == self.game:
                if v.seat not in signers or v.seat in voters:
                    return f"leave of seat {v.seat}: not a distinct signer of the removal"
                if not wire.verify_sig(v, self.players[v.seat]["key"]):
                    return f"the leave of seat {v.seat} is not validly signed"
                voters.add(v.seat)
                continue
            if v.kind != "away" or v.game != self.game:
                return "a proof frame is not an away vote (or a leave) of this game"
            if v.seq != e.seq or v.prev != e.prev:
                return f"a vote of seat {v.seat} is for another position"
            if v.body["seat"] != X or v.body["hand"] != b["hand"]:
                return f"a vote of seat {v.seat} is not for seat {X} in hand {b['hand']}"
            if v.seat not in signers or v.seat in voters:
                return f"vote of seat {v.seat}: not a distinct signer of the removal"
            if not wire.verify_sig(v, self.players[v.seat]["key"]):
                return f"the vote of seat {v.seat} is not validly signed"
            voters.add(v.seat)
            own = own or v.seat == e.seat
        if not own:
            return "the signer's own vote is missing"
        if 2 * len(voters) <= n:
            return f"{len(voters)} votes of {n} seats in the game: no majority"
        return None

    def _remove(self, e):
        """rules 1-4 of "When a `remove` is valid", then the effect once the last signer signed"""
        b, me = e.body, e.seat
        X = b["seat"]

        def bad(why: str) -> NoReturn:
            raise Violation("bad_removal", me, why)
        if self.phase in ("offer", "seating", "agree", "toss") or self.over or self.exp is None:
            bad("the game has not begun or is over")
        if not 0 <= X < self.N or X in self.removed or X == me:
            bad(f"seat {X} cannot be removed by seat {me}")
        if b["hand"] != self.hand_no:
            bad(f"hand {b['hand']}, playing {self.hand_no}")
        stack = self.removing
        busy = [r["X"] for r in stack]
        if X in busy:                                   # rule 3: the other signers, in seat order
            top = stack[-1]
            if top["X"] != X:
                bad(f"the removal of seat {top['X']} comes first")
            if me != top["left"][0]:
                bad(f"seat {top['left'][0]} signs next")
            if b["reason"] != top["reason"] or b["proof"] != []:
                bad("reason or proof differ from the first remove")
            top["left"] = top["left"][1:]
        else:                                           # rule 2 (and 4: nested)
            if self.exp[0] != X:
                bad(f"seat {X} is not the expected speaker")
            signers, n = self.removal_signers(X)
            E = self.ended if self.phase == "game_end" else set()
            if E and 2 * len(E | set(busy) | {X}) > n:     # rule 5: the game's end
                bad(f"seats {sorted(E)} signed the game's end: its end is signed, not its seats removed")
            if len(signers) < 2:
                bad("fewer than two signers")
            if me not in signers:
                bad(f"seat {me} is not a signer of the removal of seat {X}")
            if b["reason"] == "absent":
                if 2 * len(signers) <= n:
                    bad(f"{len(signers)} signers of {n} seats in the game: no majority")
                why = self.check_votes(e, X, signers, n)
                if why:
                    bad(why)
            else:
                if len(b["proof"]) != 1:
                    bad("the proof of a left removal is exactly the seat's leave")
                try:
                    lv = wire.decode(b["proof"][0])
                except wire.WireError:
                    bad("proof does not decode")
                if lv.kind != "leave" or lv.game != self.game or lv.seat != X \
                        or not wire.verify_sig(lv, self.players[X]["key"]):
                    bad("proof is not the seat's signed leave")
            if not stack:
                self.removal_resume = self.exp
            stack.append({"X": X, "reason": b["reason"], "N": n,
                          "left": [s for s in signers if s != me]})
        while stack and not stack[-1]["left"]:          # a removal complete
            done = stack.pop()
            Y = done["X"]
            self.removed[Y] = done["reason"]
            if self.phase != "game_end" and (self.in_game[Y] or (self.phase == "reenter" and Y in self.h.offered)):
                self.shown_left[Y] = done["reason"]    # audit: "left" only for a seat still in
            self.gone_now.append(Y)
            self.log.append(f"seat {Y} left ({done['reason']})")
            for r in stack:                             # Y's remaining steps are dropped
                r["left"] = [s for s in r["left"] if s != Y]
        if stack:
            self.exp = (stack[-1]["left"][0], {"remove"})
            return
        Z, self.gone_now = self.gone_now, []
        for z in Z:
            self.in_game[z] = False
        self._after_removal(Z)

    def _after_removal(self, Z):
        if self.phase == "game_end":
            self.end_left = [s for s in self.end_left if s not in Z]
            if self.end_left:
                self.exp = (self.end_left[0], {"game_end"})
            else:
                self.exp, self.over, self.complete = None, True, True
            return
        h = self.h
        if self.phase == "reenter":
            h.offered = [s for s in h.offered if s not in Z]
            if h.offered:
                self.exp = (h.offered[0], {"reenter"})
            else:
                self._after_reentry()
            return
        if not any(z in h.A for z in Z):
            self.exp = self.removal_resume
            return
        scored = self.phase in ("secret", "hand_digest") and not getattr(h, "void", False)
        if scored:                                      # scores stand, secrets and digests dropped
            self._after_hand()
            return
        h.void = True                                   # void: 0 for everyone, counts as a hand
        self.hands_played += 1
        self._after_reentry()

    # -- setup -----------------------------------------------------------------------------
    def _offer(self, e):
        if e.seq != 0 or e.seat != 0:
            raise Violation("malformed", e.seat, "offer not at 0")
        b = e.body
        en.check_rules(b["rules"])
        if b["proof_rounds"] != b["rules"]["shuffle_proof_rounds"]:
            raise Violation("bad_rules", 0, "proof_rounds")
        r, n = b["rules"], b["max_seats"]
        if not r["min_players"] <= n <= r["max_players"]:
            raise Violation("bad_rules", 0, f"{n} seats: the rules take {r['min_players']}-{r['max_players']}")
        size = len(en.build_deck(r, n))
        if size < 7 * n + 2 or size > 108:
            raise Violation("bad_rules", 0, f"a deck of {size} cards for {n} seats")
        self.offer, self.rules, self.game = b, b["rules"], e.game
        self.k = b["proof_rounds"]
        self.phase = "seating"
        self.exp = (0, {"seating"})

    def _seating(self, e):
        ps = e.body["players"]
        if not 2 <= len(ps) <= self.offer["max_seats"] or len({p["key"] for p in ps}) != len(ps) \
                or ps[0]["key"] != self.offer["host_key"]:
            raise Violation("bad_seating", 0)
        self.players, self.N = ps, len(ps)
        self.engine = en.Engine(self.rules, self.N)
        self.C = len(self.engine.deck)
        self.rh = wire.rules_hash(self.rules, self.k)
        self.sh = wire.seating_hash(ps)
        self.commits, self.nonces = {}, {}
        self.totals = [0] * self.N
        self.in_game = [True] * self.N
        self.reentries_used = [0] * self.N
        self.left = set()
        self.removed: dict[int, str] = {}    # seat -> reason, removed for good
        self.removing: list[dict] = []       # removals being signed (nested: the last first)
        self.gone_now = []
        self.shown_left: dict[int, str] = {}
        self.phase = "agree"
        self.exp = (0, {"agree"})

    def _agree(self, e):
        b = e.body
        if b["rules_hash"] != self.rh or b["seating_hash"] != self.sh:
            raise Violation("disagree", e.seat)
        self.commits[e.seat] = b["toss_commit"]
        self.exp = (e.seat + 1, {"agree"}) if e.seat + 1 < self.N else (0, {"toss"})
        if e.seat + 1 == self.N:
            self.phase = "toss"

    def _toss(self, e):
        if wire.toss_commit(self.game, e.seat, e.body["nonce"]) != self.commits[e.seat]:
            raise Violation("toss", e.seat)
        self.nonces[e.seat] = e.body["nonce"]
        if e.seat + 1 < self.N:
            self.exp = (e.seat + 1, {"toss"})
            return
        self.dealer = wire.first_dealer(self.game, [self.nonces[s] for s in range(self.N)])
        self.hand_no = 0
        self._start_hand()

    # -- hands -----------------------------------------------------------------------------
    def _start_hand(self):
        h = Hand()
        self.h = h
        h.A = [s for s in range(self.N) if self.in_game[s]]
        i = h.A.index(self.dealer)
        h.order = h.A[i + 1:] + h.A[:i + 1]           # playing order from the seat after the dealer
        h.shuffle_order = h.order                      # dealer last
        h.ctx = {s: cr.ctx_of(self.game, self.hand_no, s) for s in h.A}
        h.kc, h.Y = {}, {}
        h.round = 0
        h.deck = cr.initial_deck(self.C)              # current input of the shuffle chain
        h.slots = []                                   # ciphertext of every slot
        h.shares = {}                                  # slot -> seat -> d
        h.faces = {}                                   # slot -> card index, opened during the hand
        h.hands = {s: [] for s in h.A}                 # seat -> slots held (in order)
        h.pile = []
        h.stock = []
        h.turn_i = 0
        h.drawn = False
        h.finished_turn = set()
        h.closer = None
        h.secrets = {}
        h.digests = 0
        h.shuffle_in = None
        h.x = None                                     # our secret (seat mode)
        self.phase = "key_commit"
        self.exp = (h.A[0], {"key_commit"})

    def _next_in_A(self, seat, kind, then):
        A = self.h.A
        i = A.index(seat)
        if i + 1 < len(A):
            self.exp = (A[i + 1], {kind})
        else:
            then()

    def _key_commit(self, e):
        self.h.kc[e.seat] = e.body["commit"]

        def then():
            self.phase = "key_share"
            self.exp = (self.h.A[0], {"key_share"})
        self._next_in_A(e.seat, "key_commit", then)

    def _key_share(self, e):
        h = self.h
        h.Y[e.seat] = cr.check_key_share(h.ctx[e.seat], e.body["share"], e.body["nonce"], h.kc[e.seat])

        def then():
            Y = cr.O
            for s in h.A:
                Y = cr.add(Y, h.Y[s])
            if Y == cr.O:
                raise Violation("key_share", e.seat, "joint key is the identity")
            h.joint = Y
            self._begin_shuffle(0, cr.initial_deck(self.C))
        self._next_in_A(e.seat, "key_share", then)

    def _begin_shuffle(self, rnd, deck_in):
        h = self.h
        h.round = rnd
        h.shuffle_in = deck_in
        h.shuffle_i = 0
        self.phase = "shuffle"
        self.exp = (h.shuffle_order[0], {"shuffle"})

    def _shuffle(self, e):
        h = self.h
        if e.body["round"] != h.round:
            raise Violation("shuffle", e.seat, "round")
        D = h.shuffle_in
        assert D is not None                           # set by the round's start
        D2 = cr.dec_deck(e.body["deck"])
        if len(D2) != len(D):
            raise Violation("shuffle", e.seat, "deck size")
        if self.rules["shuffle_proof"] == "terelius-wikstrom":
            cr.tw_verify(h.ctx[e.seat], h.round, h.joint, D, D2, e.body["proof"])
        else:
            cr.cc_verify(h.ctx[e.seat], h.round, self.k, h.joint, D, D2, e.body["proof"])
        h.shuffle_in = D2
        h.shuffle_i += 1
        if h.shuffle_i < len(h.shuffle_order):
            self.exp = (h.shuffle_order[h.shuffle_i], {"shuffle"})
            return
        if h.round == 0:
            h.slots = list(D2)
            m = len(h.A)
            for k in range(7 * m):
                h.hands[h.order[k % m]].append(k)
            h.upcard = 7 * m
            h.stock = list(range(7 * m + 1, self.C))
            self.phase = "deal"
            self.exp = (h.A[0], {"deal_shares"})
        else:
            S = len(h.slots)
            h.slots.extend(D2)
            h.stock = list(range(S, S + len(D2)))
            self.phase = "turn"
            self.exp = (h.order[h.turn_i], {"draw"})

    def owner(self, slot):
        for s, sl in self.h.hands.items():
            if slot in sl:
                return s
        return None

    def _check_share(self, seat, slot, share):
        h = self.h
        c1, c2 = h.slots[slot]
        d = cr.check_dec_share(h.ctx[seat], slot, c1, c2, h.Y[seat], share)
        h.shares.setdefault(slot, {})[seat] = d

    def _open(self, slot, own: int | None = None):
        """open a slot from every seat's share (own: our own d computed locally)"""
        h = self.h
        c1, c2 = h.slots[slot]
        M = c2
        for s in h.A:
            d = h.shares.get(slot, {}).get(s)
            if d is None and s == own:
                assert h.x is not None                 # own: we hold a seat of the hand
                d = cr.mul(h.x, c1)
            assert d is not None                       # a slot is opened once every share is in
            M = cr.sub(M, d)
        card = cr.card_of_point(M, self.C)
        if card is None:
            raise Violation("not_a_card", -1, f"slot {slot}")
        if slot in h.faces and h.faces[slot] != card:
            raise Violation("face_mismatch", -1, f"slot {slot}")
        h.faces[slot] = card
        return card

    def _deal_shares(self, e):
        h = self.h
        want = sorted([k for s in h.A if s != e.seat for k in h.hands[s]] + [h.upcard])
        if len(e.body["shares"]) != len(want):
            raise Violation("share", e.seat, "count")
        for slot, share in zip(want, e.body["shares"], strict=True):
            self._check_share(e.seat, slot, share)

        def then():
            self._open(h.upcard)
            h.pile = [h.upcard]
            if self.me in h.A and h.x is not None:
                for k in h.hands[self.me]:
                    self._open(k, own=self.me)
            self.phase = "turn"
            self._turn_start()
        self._next_in_A(e.seat, "deal_shares", then)

    def _turn_start(self):
        h = self.h
        p = h.order[h.turn_i]
        h.drawn = False
        if not h.stock:
            cap = self.rules.get("max_reshuffles", 0)
            if cap and h.round >= cap:       # "Hands" step 5 (a): ends as reshuffle_end says
                if self.rules.get("reshuffle_end", "void") == "score":
                    i = h.A.index(p)             # scored as it stands: every seat shows, from p
                    h.closer, h.chinchon = None, False
                    h.show_left = [h.A[(i + j) % len(h.A)] for j in range(len(h.A))]
                    self.phase = "show"
                    self.exp = (h.show_left[0], {"show"})
                    return
                self._void()
                return
            if len(h.pile) >= 2:
                n_in = h.pile[:-1]
                h.retired = getattr(h, "retired", []) + n_in
                h.pile = [h.pile[-1]]
                self._begin_shuffle(h.round + 1, [h.slots[s] for s in n_in])
                return
            self._void()
            return
        self.exp = (p, {"draw"})

    def _void(self):
        h = self.h
        h.closer = None
        h.void = True
        self.phase = "secret"
        self.exp = (h.A[0], {"secret"})

    def _draw(self, e):
        h = self.h
        if e.body["source"] == "stock":
            if not h.stock:
                raise Violation("empty_stock", e.seat)
            slot = h.stock.pop(0)
            h.hands[e.seat].append(slot)
            h.draw_slot = slot
            others = [s for s in h.A if s != e.seat]
            h.draw_left = others
            self.phase = "draw_share"
            self.exp = (others[0], {"draw_share"})
        else:
            if not h.pile:
                raise Violation("empty_pile", e.seat)
            slot = h.pile.pop()
            h.hands[e.seat].append(slot)
            h.last_from_discard = slot
            self.exp = (e.seat, {"discard", "close"})
        h.drawn = True

    def _draw_share(self, e):
        h = self.h
        if e.body["slot"] != h.draw_slot:
            raise Violation("share", e.seat, "slot")
        self._check_share(e.seat, h.draw_slot, e.body["share"])
        h.draw_left = h.draw_left[1:]
        if h.draw_left:
            self.exp = (h.draw_left[0], {"draw_share"})
        else:
            p = h.order[h.turn_i]
            if p == self.me and h.x is not None:
                self._open(h.draw_slot, own=self.me)
            self.phase = "turn"
            self.exp = (p, {"discard", "close"})

    def _discard(self, e):
        h = self.h
        slot = e.body["slot"]
        if slot not in h.hands[e.seat]:
            raise Violation("not_in_hand", e.seat)
        self._check_share(e.seat, slot, e.body["share"])
        self._open(slot)
        h.hands[e.seat].remove(slot)
        h.pile.append(slot)
        h.finished_turn.add(e.seat)
        h.turn_i = (h.turn_i + 1) % len(h.order)
        self._turn_start()

    def _close(self, e):
        h = self.h
        slot = e.body["slot"]
        held = h.hands[e.seat]
        if slot not in held:
            raise Violation("not_in_hand", e.seat)
        kept = [s for s in held if s != slot]
        got = [r["slot"] for r in e.body["shares"]]
        if sorted(got) != sorted(kept):
            raise Violation("close", e.seat, "shares must cover exactly the kept slots")
        if self.rules["first_round_ban"] and not all(s in h.finished_turn for s in h.A):
            raise Violation("first_round_close", e.seat)
        for r in e.body["shares"]:
            self._check_share(e.seat, r["slot"], r["share"])
        cards = [self.engine.deck[self._open(s)] for s in kept]
        score, chinchon = self.engine.close_result(cards)
        h.closer, h.close_score, h.chinchon = e.seat, score, chinchon
        h.facedown = slot
        h.hands[e.seat] = kept
        i = h.A.index(e.seat)
        h.show_left = [h.A[(i + j) % len(h.A)] for j in range(1, len(h.A))]
        self.phase = "show"
        self.exp = (h.show_left[0], {"show"})

    def _show(self, e):
        h = self.h
        got = [r["slot"] for r in e.body["shares"]]
        if sorted(got) != sorted(h.hands[e.seat]):
            raise Violation("show", e.seat, "shares must cover exactly the seat's slots")
        for r in e.body["shares"]:
            self._check_share(e.seat, r["slot"], r["share"])
        for s in got:
            self._open(s)
        h.show_left = h.show_left[1:]
        if h.show_left:
            self.exp = (h.show_left[0], {"show"})
            return
        self._score()
        self.phase = "secret"
        self.exp = (h.A[0], {"secret"})

    def _score(self):
        h = self.h
        E = self.engine
        if h.closer is None:                 # scored as it stands: each seat's unlimited best
            h.scores = {s: E.best([E.deck[h.faces[k]] for k in h.hands[s]])[0] for s in h.A}
            for s, v in h.scores.items():
                self.totals[s] += v
            return
        h.scores = {h.closer: h.close_score}
        melds, clean = E.close_melds([E.deck[h.faces[k]] for k in h.hands[h.closer]])
        i = h.A.index(h.closer)
        others = [h.A[(i + j) % len(h.A)] for j in range(1, len(h.A))]
        pens = E.showdown(melds, clean, [[E.deck[h.faces[k]] for k in h.hands[s]] for s in others])
        for s, p in zip(others, pens, strict=True):
            h.scores[s] = p
        for s, v in h.scores.items():
            self.totals[s] += v

    def _secret(self, e):
        h = self.h
        x = cr.sc_in(e.body["secret"], "secret")
        if x == 0 or cr.base(x) != h.Y[e.seat]:
            raise Violation("secret", e.seat)
        h.secrets[e.seat] = x

        def then():
            final = []
            for slot, (c1, c2) in enumerate(h.slots):
                M = c2
                for s in h.A:
                    M = cr.sub(M, cr.mul(h.secrets[s], c1))
                card = cr.card_of_point(M, self.C)
                if card is None:
                    raise Violation("end_of_hand", -1, f"slot {slot} is not a card")
                if slot in h.faces and h.faces[slot] != card:
                    raise Violation("end_of_hand", -1, f"slot {slot} face mismatch")
                final.append(card)
            if sorted(final[:self.C]) != list(range(self.C)):
                raise Violation("end_of_hand", -1, "not a permutation")
            h.final = final
            h.head = e.hash
            self.phase = "hand_digest"
            self.exp = (h.A[0], {"hand_digest"})
        self._next_in_A(e.seat, "secret", then)

    def my_digest(self):
        h = self.h
        return wire.hand_digest(self.game, self.hand_no, h.head, self.totals, h.final)

    def _hand_digest(self, e):
        if e.body["totals"] != self.totals or e.body["digest"] != self.my_digest():
            raise Violation("digest_mismatch", e.seat,
                            f"totals {e.body['totals']} vs ours {self.totals}")
        self._next_in_A(e.seat, "hand_digest", self._after_hand)

    def _after_hand(self):
        h = self.h
        self.hands_played += 1
        if getattr(h, "void", False):
            self._next_hand()
            return
        if h.chinchon:
            self.winner = h.closer
            return self._end()
        r = self.rules
        busted = [s for s in h.A if self.totals[s] > r["limit"]]
        still = [s for s in h.A if s not in busted and s not in self.removed]
        h.offered = [s for s in busted if self.reentries_used[s] < r["reentries"]
                     and len(still) >= r["reentry_min_remaining"]]
        for s in busted:                  # removed with this hand's scores: "out" unless it
            if s in self.removed and s not in h.offered:   # would have been offered re-entry
                self.shown_left.pop(s, None)
        h.offered = [s for s in h.offered if s not in self.removed]
        for s in busted:
            self.in_game[s] = False
        if h.offered:
            self.phase = "reenter"
            self.exp = (h.offered[0], {"reenter"})
            return
        self._after_reentry()

    def _reenter(self, e):
        h = self.h
        if e.body["accept"]:
            self.in_game[e.seat] = True
            self.reentries_used[e.seat] += 1
            still = [s for s in h.A if self.in_game[s] and s not in h.offered]
            self.totals[e.seat] = max(self.totals[s] for s in still)
        h.offered = h.offered[1:]
        if h.offered:
            self.exp = (h.offered[0], {"reenter"})
        else:
            self._after_reentry()

    def _after_reentry(self):
        h = self.h
        still = [s for s in range(self.N) if self.in_game[s]]
        if len(still) == 1:
            self.winner = still[0]
            return self._end()
        if not still:
            cands = h.A
            low = min(self.totals[s] for s in cands)
            tied = [s for s in cands if self.totals[s] == low]
            if h.closer in tied:
                self.winner = h.closer
            else:
                self.winner = next(s for s in h.order if s in tied)
            return self._end()
        self._next_hand()

    def _next_hand(self):
        d = self.dealer
        for j in range(1, self.N + 1):
            if self.in_game[(d + j) % self.N]:
                self.dealer = (d + j) % self.N
                break
        self.hand_no += 1
        self._start_hand()

    def _end(self):
        self.phase = "game_end"
        self.ended = set()   # every game_end chained counts, its seat's later leave notwithstanding
        self.end_left = [s for s in range(self.N) if s not in self.left and s not in self.removed]
        self.N_end = len(self.end_left)     # fixed when the game is over ("The game's end")
        self.out_at_end = set(self.left) | set(self.removed)
        self.exp = (self.end_left[0], {"game_end"})

    def _game_end(self, e):
        if e.body["winner"] != (255 if self.winner is None else self.winner):
            raise Violation("game_end", e.seat, "winner")
        if e.body["digest"] != e.prev:
            raise Violation("game_end", e.seat, "digest")
        self.end_left = self.end_left[1:]
        self.ended.add(e.seat)
        if self.end_left:
            self.exp = (self.end_left[0], {"game_end"})
        else:
            self.exp = None
            self.over = True
            self.complete = True


def audit(frames: list[bytes]) -> tuple[bool, str]:
    """Replay a transcript as an observer: (complete and valid, one-line summary)."""
    t = Table()
    t.exp = None
    for i, f in enumerate(frames):
        try:
            e = wire.decode(f)
        except wire.WireError as ex:
            return False, f"corrupt: envelope {i}: {ex.code}"
        try:
            t.apply(e)
        except Violation as v:
            return False, f"cheat: envelope {i}: seat {v.seat}: {v.rule}: {v.reason}"
    ended = set(getattr(t, "ended", ()))
    gone = (set(getattr(t, "left", ())) | set(getattr(t, "removed", ()))) - getattr(t, "out_at_end", set()) - ended
    by_majority = getattr(t, "phase", None) == "game_end" and 2 * len(ended) > getattr(t, "N_end", 0) - len(gone)
    left_after = t.over and t.chain and t.chain[-1].kind == "leave"   # a leave after the end changes nothing
    by_majority = by_majority and (not t.over or left_after)
    if getattr(t, "complete", False) or by_majority:  # "Removal", the game's end
        shown = "".join(f", seat {s} left ({r})" for s, r in sorted(t.shown_left.items()))
        return True, f"ok: {len(frames)} envelopes, {t.hands_played} hands, totals {t.totals}, winner seat {t.winner}{shown}"
    if getattr(t, "removed_spoke", False):       # a removed seat's fault or leave changes nothing
        return False, f"incomplete: {len(frames)} envelopes, {t.verdict}"
    if t.over and t.chain[-1].kind == "leave":   # a chained leave is no fault ("Faults and audit")
        return False, f"incomplete: {len(frames)} envelopes, seat {t.chain[-1].seat} left"
    if t.over:
        return False, f"stopped at envelope {len(t.chain) - 1}: {t.log[-1] if t.log else ''}"
    return False, f"incomplete: {len(frames)} envelopes, next {t.exp}"


def split_frames(data: bytes) -> list[bytes]:
    """cut a transcript file into frames (each frame is one msgpack array)"""
    import msgpack
    u = msgpack.Unpacker(raw=False, strict_map_key=False)
    u.feed(data)
    out, pos = [], 0
    for _ in u:
        end = u.tell()
        out.append(data[pos:end])
        pos = end
    return out
