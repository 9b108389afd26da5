"""The rules engine as docs/protocol.md "Rules and cards" states it: the deck, penalties, melds,
the arrangement search, close legality and score, and the showdown for `lay_off=none` (the lay-off
search for `all`/`closer` is not implemented: the seat refuses such tables)."""
from __future__ import annotations

from collections.abc import Container
from functools import cache

RANKS = {40: (1, 2, 3, 4, 5, 6, 7, 10, 11, 12), 48: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12),
         52: (1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 10, 11, 12)}
RANK_CH = {"A": 1, "T": 13, "J": 10, "Q": 11, "K": 12, **{str(i): i for i in range(2, 10)}}
SUIT_CH = {"d": 0, "h": 1, "s": 2, "c": 3}
FIELDS: dict[str, tuple[type, Container[object] | None]] = {  # name: (type, allowed) from the rules table
    "preset": (str, {"classic", "online", "fournier", "cardgames"}), "deck_size": (int, {40, 48, 52}),
    "decks": (int, {0, 1, 2}), "two_decks_from": (int, range(0, 9)), "min_players": (int, range(2, 9)),
    "max_players": (int, range(2, 9)), "jokers": (int, range(0, 3)), "wild_card": (str, None),
    "wild_points": (int, range(0, 1001)), "max_wild_per_meld": (int, range(0, 9)),
    "min_real_per_meld": (int, range(1, 4)), "court_points": (str, {"flat", "rank", "auto", "position"}),
    "suits": (str, {"french", "spanish"}), "close_max_points": (int, range(0, 1001)),
    "close_max_unmatched": (int, range(0, 8)), "close_wild_unmatched": (bool, None),
    "first_round_ban": (bool, None), "clean_close_points": (int, range(-1000, 1001)),
    "chinchon_wins": (bool, None), "wild_chinchon_points_1": (int, range(-1000, 1001)),
    "wild_chinchon_points_2": (int, range(-1000, 1001)), "lay_off": (str, {"all", "closer", "none"}),
    "lay_off_after_clean": (str, {"same", "others", "none"}), "limit": (int, range(1, 100001)),
    "reentries": (int, range(0, 101)), "reentry_min_remaining": (int, range(2, 9)),
    "reentry_score": (str, {"highest"}), "shuffle_proof_rounds": (int, range(1, 129)),
    "shuffle_proof": (str, {"terelius-wikstrom", "cut-and-choose"}),
}


# optional fields: present only when not at their default (found by trial, now in the doc)
OPTIONAL = {"showdown_time": (range(0, 601), 30), "turn_time": (range(0, 3601), 60),
            "rejoin_wait": (range(0, 86401), 120), "stall_limit": (range(1, 604801), 900),
            "max_reshuffles": (range(0, 101), 0), "reshuffle_end": ({"void", "score"}, "void")}


class RuleError(Exception):
    def __init__(self, rule: str, reason: str = ""):
        super().__init__(f"{rule}: {reason}")
        self.rule = rule


def check_rules(r: dict) -> None:
    extra = set(r) - set(FIELDS)
    if set(FIELDS) - set(r) or extra - set(OPTIONAL):
        raise RuleError("bad_rules", f"fields {sorted(set(r) ^ set(FIELDS))}")
    for k in extra:
        values, default = OPTIONAL[k]
        if type(r[k]) is not type(default) or r[k] not in values or r[k] == default:
            raise RuleError("bad_rules", f"{k}: out of range, or written at its default")
    for k, (t, allowed) in FIELDS.items():
        v = r[k]
        if type(v) is not t or (allowed is not None and v not in allowed):
            raise RuleError("bad_rules", k)
    if r["min_players"] > r["max_players"]:
        raise RuleError("bad_rules", "min_players > max_players")
    if r["wild_card"] and parse_card(r["wild_card"]) is None:
        raise RuleError("bad_rules", "wild_card")


def parse_card(s: str):
    if len(s) == 2 and s[0].upper() in RANK_CH and s[1].lower() in SUIT_CH:
        return RANK_CH[s[0].upper()], SUIT_CH[s[1].lower()]
    return None


def build_deck(r: dict, n: int) -> list[tuple[int, int, int]]:
    packs = r["decks"] if r["decks"] else (2 if r["two_decks_from"] and n >= r["two_decks_from"] else 1)
    deck = []
    for copy in range(packs):
        for suit in range(4):
            for rank in RANKS[r["deck_size"]]:
                deck.append((rank, suit, copy))
        for j in range(r["jokers"]):
            deck.append((0, j, copy))
    return deck


class Engine:
    def __init__(self, rules: dict, n_players: int):
        self.r = rules
        self.deck = build_deck(rules, n_players)
        self.order = RANKS[rules["deck_size"]]
        self.pos = {rk: i for i, rk in enumerate(self.order)}
        self.wild = parse_card(rules["wild_card"]) if rules["wild_card"] else None

    def is_wild(self, c) -> bool:
        return c[0] == 0 or (self.wild is not None and (c[0], c[1]) == self.wild)

    def value(self, c) -> int:
        if self.is_wild(c):
            return self.r["wild_points"]
        rank = c[0]
        if rank <= 9:
            return rank
        if rank == 13:
            return 10
        cp = self.r["court_points"]
        if cp == "auto":
            cp = "rank" if self.r["deck_size"] == 48 else "flat"
        return {"flat": 10, "rank": rank, "position": rank - 2}[cp]

    def is_meld(self, cards) -> bool:
        if len(cards) < 3:
            return False
        wild = [c for c in cards if self.is_wild(c)]
        real = [c for c in cards if not self.is_wild(c)]
        if len(real) < self.r["min_real_per_meld"] or len(wild) > self.r["max_wild_per_meld"]:
            return False
        # set
        if len(cards) <= 4 and len({c[0] for c in real}) == 1 and len({c[1] for c in real}) == len(real):
            return True
        # run
        if len({c[1] for c in real}) == 1:
            ps = [self.pos[c[0]] for c in real]
            if len(set(ps)) == len(ps) and len(cards) <= len(self.order) and max(ps) - min(ps) + 1 <= len(cards):
                return True
        return False

    def is_seven_run(self, cards) -> bool:
        """seven cards forming one run (wild cards allowed, no per-meld wild limits)"""
        real = [c for c in cards if not self.is_wild(c)]
        if len(cards) != 7 or not real or len({c[1] for c in real}) != 1:
            return False
        ps = [self.pos[c[0]] for c in real]
        return len(set(ps)) == len(ps) and max(ps) - min(ps) + 1 <= 7 <= len(self.order)

    def _prepare(self, cards):
        cs = sorted(cards)            # (rank, suit, copy), jokers (rank 0) first
        n = len(cs)
        melds = [m for m in range(1, 1 << n) if bin(m).count("1") >= 3
                 and self.is_meld([cs[j] for j in range(n) if m >> j & 1])]
        return cs, melds

    def best(self, cards, max_unmatched=None, wild_unmatched=True):
        """(points, unmatched, melds as lists of cards) or None when the limits cannot be met."""
        cs, melds = self._prepare(cards)
        n = len(cs)
        lim = n if max_unmatched is None else max_unmatched

        @cache
        def go(M, budget):
            if M == 0:
                return (0, 0, ())
            i = (M & -M).bit_length() - 1
            best = None
            if budget > 0 and (wild_unmatched or not self.is_wild(cs[i])):
                sub = go(M & ~(1 << i), budget - 1)
                if sub is not None:
                    best = (sub[0] + self.value(cs[i]), sub[1] + 1, sub[2])
            for m in melds:
                if m >> i & 1 and m & M == m:
                    sub = go(M & ~m, budget)
                    if sub is not None and (best is None or (sub[0], sub[1]) < (best[0], best[1])):
                        best = (sub[0], sub[1], (m,) + sub[2])
            return best

        res = go((1 << n) - 1, lim)
        if res is None:
            return None
        return res[0], res[1], [[cs[j] for j in range(n) if m >> j & 1] for m in res[2]]

    def close_result(self, kept):
        """(score, chinchon) for a legal close of seven kept cards, else RuleError."""
        r = self.r
        if r["chinchon_wins"] and not any(self.is_wild(c) for c in kept) and self.is_seven_run(kept):
            return r["clean_close_points"], True
        cands = []
        a = self.best(kept, r["close_max_unmatched"], r["close_wild_unmatched"])
        if a is not None and a[0] <= r["close_max_points"]:
            cands.append(r["clean_close_points"] if a[1] == 0 else a[0])
        nw = sum(self.is_wild(c) for c in kept)
        if nw and self.is_seven_run(kept):
            cands.append(r["wild_chinchon_points_1"] if nw == 1 else r["wild_chinchon_points_2"])
        if not cands:
            raise RuleError("close_points", "this hand may not close")
        return min(cands), False   # (a) first on a tie: the same score either way

    def close_melds(self, kept):
        """the melds the closer shows: the seven-card run for a chinchón and when the wild
        seven-run's score wins, else its limited arrangement's ("Close score", melds shown)"""
        r = self.r
        score, chinchon = self.close_result(kept)
        a = self.best(kept, r["close_max_unmatched"], r["close_wild_unmatched"])
        if chinchon or a is None or a[0] > r["close_max_points"] or score < (r["clean_close_points"] if a[1] == 0 else a[0]):
            return [sorted(kept)], True
        return a[2], a[1] == 0

    def _fits(self, c, meld):
        """a wild card, or the rank of every natural card of a meld under 4 cards (a set),
        or their suit (a run): the meld is its cards, not the kind it was shown as"""
        if self.is_wild(c):
            return True
        real = [x for x in meld if not self.is_wild(x)]
        return (len(meld) < 4 and all(x[0] == c[0] for x in real)) or all(x[1] == c[1] for x in real)

    def showdown(self, closer_melds, clean, hands):
        """penalties of the other seats, `hands` in showing order (going round from the closer)"""
        import itertools
        r = self.r
        lay = r["lay_off"] if not clean or r["lay_off_after_clean"] == "same" else (
            "others" if r["lay_off_after_clean"] == "others" else "none")
        table = [[list(m), True] for m in closer_melds]      # [cards, is the closer's]
        out = []
        for hand in hands:
            if lay == "none":
                targets = []
            elif lay == "closer":
                targets = [t for t in table if t[1]]
            elif lay == "others":
                targets = [t for t in table if not t[1]]
            else:
                targets = list(table)
            cs = sorted(hand)

            fitting = [c for c in cs if any(self._fits(c, t[0]) for t in targets)]
            cands = []
            idx = 0
            for k in range(len(fitting) + 1):
                for sub in itertools.combinations(fitting, k):
                    rest = list(cs)
                    for c in sub:
                        rest.remove(c)
                    cands.append((self.best(rest)[0], k, idx, sub, rest))
                    idx += 1
            cands.sort(key=lambda x: x[:3])
            for _pen, _k, _, sub, rest in cands:
                assign = self._assign(list(sub), targets, {})
                if assign is not None:
                    for c, ti in zip(sub, assign, strict=True):
                        targets[ti][0].append(c)
                    b = self.best(rest)
                    for m in b[2]:
                        table.append([list(m), False])
                    out.append(b[0])
                    break
        return out

    def _assign(self, cards, targets, added):
        if not cards:
            for ti, cs in added.items():
                if not self.is_meld(targets[ti][0] + cs):
                    return None
            return []
        c = cards[0]
        for ti, t in enumerate(targets):
            if not self._fits(c, t[0] + added.get(ti, [])):
                continue
            new = added.get(ti, []) + [c]
            res = self._assign(cards[1:], targets, {**added, ti: new})
            if res is not None:
                return [ti] + res
        return None
