"""A recorded game as a replay model: the audit's verdict, then the public state after every
envelope, with every card the record reveals (``p2p-chinchon replay``, docs/web.md "Replay").

The file is audited first (:func:`p2p_chinchon.audit.audit_file`: no network, no secrets). Its
envelopes are then replayed through an observer :class:`~p2p_chinchon.table.Table` (the one
``audit`` runs), up to the envelope the verdict names when it names one (a cheat, a damaged
frame, an accusation): nothing after that envelope is in the model. Proofs are not checked a
second time: every envelope replayed passed the audit.

Which cards the model holds: a card whose face was public at that moment (the upcard, a
discard, the cards a close or a show opens); and, for a hand whose end-of-hand secrets are all
in the record (docs/protocol.md "Hands", step 7), every slot of that hand (the hands dealt, the
stock in its order, each draw), decrypted with those secrets. A hand cut short before its last
``secret`` keeps its hidden cards hidden (``null``).

Shape (JSON-able; the page ``web/static/replay.js`` reads it)::

    {"file": name, "verdict": VERDICT, "table_name", "deck": "french"|"spanish", "limit",
     "players": [{seat, name, fingerprint}], "cards": [CARD] (card index -> CARD),
     "hands": [HAND], "steps": [STEP], "failed": FAILED|null,
     "scores": {"names", "rows": [[penalty per seat] per hand], "totals": [[total per seat]
                after each hand's scores, before its re-entries] per hand], "limit",
                "marks": the audit's eliminations and re-entries (AuditReport.marks)}}
    VERDICT = {"verdict", "summary", "exit_code", "seat", "index", "rule", "detail",
               "winner", "envelopes"}
    FAILED = {"index": envelope index, "seat", "kind": its kind|null (undecodable), "rule", "reason"}
    HAND = {"hand": 0-based, "dealer", "first_step", "last_step", "revealed": bool,
            "revealed_at": envelope index|null, "dealt": {seat: [card index|null]},
            "upcard": card index|null, "stock": [card index|null] (as drawn),
            "showdown": SHOWDOWN|null, "penalties": [int per seat]|null, "void": bool,
            "scored_step": the step where the hand is scored|null,
            "face_down": the card the closer put face down (known once revealed)|null}
    SHOWDOWN = {"closer", "hands": [{seat, name, melds: [[card index]], laid_off: [{card,
                onto_seat, onto_meld}], deadwood: [card index], penalty}]}
    STEP = {"index": envelope index, "seat", "kind", "hand": 0-based|null, "phase", "log": [text],
            "to_play", "dealer", "seats": [{seat, cards: [[card index|null, public 0|1]], total,
            eliminated}], "pile": [[card index|null, public 0|1]] (oldest first),
            "stock_size", "move": bool}

A CARD is the live page's card object (``web.model``), so the page draws both the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from p2p_chinchon import audit, engine, table as tbl, wire
from p2p_chinchon.i18n import Translator
from p2p_chinchon.transcript import load_transcript
from p2p_chinchon.web.model import card_json

__all__ = ["MOVE_KINDS", "replay_model", "replay_frames"]

# envelopes a person made (or whose effect a person sees): the page steps through these
MOVE_KINDS = frozenset({"draw", "discard", "close", "show", "reenter", "game_end", "leave", "remove", "fault"})
# a verdict that names the envelope where the record fails: nothing after it is replayed
_FAILING = frozenset({"cheat", "corrupt", "accused", "unsupported"})


def replay_model(path: str | Path, *, jobs: int = 1) -> dict[str, Any]:
    """Audit the transcript at ``path`` and build its replay model (the module docstring gives
    its shape). Reads the file once; ``OSError`` if it cannot be read. A file that fails the
    audit still gives a model: the steps before the failing envelope and the verdict.
    ``jobs``: processes checking the proofs (:func:`p2p_chinchon.audit.audit_frames`; the
    verdict is the same for every value)."""
    loaded = load_transcript(path)
    report = audit.audit_file(path, loaded=loaded, jobs=jobs)
    envelopes = loaded.envelopes
    if loaded.errors:  # envelopes[i] is frame i only up to the first frame that does not decode
        first = loaded.errors[0].index
        envelopes = envelopes[:first] if first is not None else envelopes
    model = replay_frames(envelopes, report)
    model["file"] = Path(path).name
    return model


def replay_frames(envelopes: Sequence[wire.Envelope], report: audit.AuditReport) -> dict[str, Any]:
    """The replay model of ``envelopes`` (decoded, in chain order) given their audit
    ``report``: every envelope before ``report.index`` when the verdict names a failing one,
    or the envelopes the audit read (a record the audit stops early, e.g. at a removed seat's
    later fault, which changes nothing), else every envelope."""
    stop = len(envelopes)
    if report.verdict in _FAILING and report.index is not None:
        stop = min(stop, report.index)
    elif report.verdict != "ok":
        stop = min(stop, report.envelopes)
    model = _Replay(report).run(envelopes[:stop])
    failed = None
    if stop < len(envelopes) or (report.verdict in _FAILING and report.index is not None):
        env = envelopes[stop] if stop < len(envelopes) else None
        failed = {"index": report.index, "seat": report.seat if report.seat is not None else (env.seat if env else None),
                  "kind": env.kind if env else None, "rule": report.rule, "reason": report.detail}
    model["failed"] = failed
    return model


def _verdict(report: audit.AuditReport) -> dict[str, Any]:
    return {"verdict": report.verdict, "summary": report.summary(), "exit_code": report.exit_code,
            "seat": report.seat, "index": report.index, "rule": report.rule, "detail": report.detail,
            "winner": report.winner, "envelopes": report.envelopes}


class _Replay:
    """One pass over the envelopes with an observer table: a STEP after each, a HAND per hand
    (its slots resolved to cards once the pass has seen its secrets)."""

    def __init__(self, report: audit.AuditReport) -> None:
        self.report = report
        self.t = tbl.Table.observer()
        self.t.hand.proof_sink = lambda *_: None  # the audit checked every proof of these envelopes
        self.steps: list[dict[str, Any]] = []
        self.hands: list[dict[str, Any]] = []
        # per hand: slot -> card index (public faces as met, every slot after the secrets)
        self.slots: list[dict[int, int]] = []
        self.totals: list[list[int]] = []
        self.index: dict[engine.Card, int] = {}
        self.logged = 0
        self.shown: object = None  # the engine's last showdown already in a HAND
        # the table of the hand being played: the pile's and each seat's (slot, public) pairs
        self.table: tuple[list[tuple[int, int]], list[list[tuple[int, int]]]] = ([], [])

    def run(self, envelopes: Sequence[wire.Envelope]) -> dict[str, Any]:
        t = self.t
        for i, env in enumerate(envelopes):
            t.replay(env)
            if not self.index and t.flow.engine is not None:
                self.index = {c: k for k, c in enumerate(t.flow.engine.deck_cards())}
            self._after(i, env)
        players = [{"seat": i, "name": p.name, "fingerprint": p.fingerprint} for i, p in enumerate(t.lobby.players)]
        rules = t.lobby.rules
        deck = rules.suits if rules is not None else "french"
        tr = Translator("en")  # the replay page is in English
        wild = rules.wild() if rules is not None else None
        cards = [card_json(c, deck, tr, wild=wild) for c in t.flow.engine.deck_cards()] if t.flow.engine is not None else []
        for step in self.steps:  # the pass is over: every hidden slot of a revealed hand is known
            h = step.pop("_hand_slots", None)
            if h is None:
                continue
            known = self.slots[step["hand"]]
            for seat in step["seats"]:
                seat["cards"] = [[known.get(s), public] for s, public in seat.pop("_slots")]
            step["pile"] = [[known.get(s), public] for s, public in step.pop("_pile")]
        for hand in self.hands:
            known = self.slots[hand["hand"]]
            hand["dealt"] = {str(s): [known.get(x) for x in ss] for s, ss in hand.pop("_dealt").items()}
            hand["stock"] = [known.get(x) for x in hand.pop("_stock")]
            up = hand.pop("_upcard")
            hand["upcard"] = known.get(up) if up is not None else None
            down = hand.pop("_face_down")
            hand["face_down"] = known.get(down) if down is not None else None
        return {
            "verdict": _verdict(self.report),
            "table_name": t.lobby.table_name,
            "deck": deck,
            "limit": rules.limit if rules is not None else None,
            "players": players,
            "cards": cards,
            "hands": self.hands,
            "steps": self.steps,
            "scores": {"names": [p["name"] for p in players], "rows": [list(r) for r in t.turns.score_history],
                       "totals": self.totals, "limit": rules.limit if rules is not None else None,
                       "marks": [dict(m) for m in self.report.marks if m["after_hand"] <= len(self.totals)]},
        }

    def _after(self, i: int, env: wire.Envelope) -> None:
        """Note the state after envelope ``i``: a new hand, the faces opened, the reveal, the
        score, and the STEP itself."""
        t = self.t
        e = t.flow.engine
        hand_no = t.hand.hand_no if t.hand.hc is not None else None
        if hand_no is not None and hand_no >= len(self.hands):
            self.hands.append({"hand": hand_no, "dealer": e.dealer if e else None, "first_step": len(self.steps),
                               "last_step": len(self.steps), "revealed": False, "revealed_at": None,
                               "_dealt": {}, "_stock": [], "_upcard": None, "_face_down": None, "showdown": None,
                               "penalties": None, "void": False, "scored_step": None})
            self.slots.append({})
        hand = self.hands[hand_no] if hand_no is not None else None
        started = e is not None and t.flow.hand_started and hand is not None and e.hand_no == hand_no
        if hand is not None and started and e is not None:
            known = self.slots[hand_no]  # type: ignore[index]
            if not hand["_dealt"]:  # the deal has just been opened: who holds which slot
                hand["_dealt"] = {s: list(ss) for s, ss in e.hands.items()}
                hand["_stock"] = list(e.stock)
                hand["_upcard"] = e.discard_pile[0] if e.discard_pile else None
            for s, c in e.faces.items():
                known.setdefault(s, self.index[c])
            for s in e.stock:  # a restock's new slots: drawn after the first stock's
                if s not in hand["_stock"]:
                    hand["_stock"].append(s)
            if env.kind == "close":
                hand["_face_down"] = e.close_discard
        if hand is not None and env.kind == "secret" and t.hand.hc is not None \
                and len(t.hand.hc.secrets) == len(t.hand.hc.seats):
            final = t.hand.audit_hand(t.hand.hc.secrets)  # every slot of the hand, decrypted
            deck = e.deck_cards() if e is not None else ()
            self.slots[hand["hand"]].update({s: self.index[deck[k]] for s, k in enumerate(final)})
            hand["revealed"], hand["revealed_at"] = True, i
        if len(t.turns.score_history) > len(self.totals) and hand is not None and e is not None:
            hand["penalties"] = list(t.turns.score_history[-1])
            shown = e.last_showdown is not None and e.last_showdown is not self.shown  # else a void hand
            self.shown = e.last_showdown
            hand["void"] = not shown
            self.totals.append(list(e.totals))
            hand["showdown"] = self._showdown() if shown else None
            hand["scored_step"] = len(self.steps)
            self._open_shown(hand["hand"])
        self.steps.append(self._step(i, env, hand))
        if hand is not None:
            hand["last_step"] = len(self.steps) - 1

    def _open_shown(self, hand_no: int) -> None:
        """The engine puts a hand away as it scores it, with the faces the last ``show`` opened:
        open those slots again from the shares in the record (every seat's is public)."""
        hc = self.t.hand.hc
        if hc is None:
            return
        pile, seats = self.table
        for cards in seats:
            for k, (slot, public) in enumerate(cards):
                if not public and all(x in self.t.hand.shares.get(slot, {}) for x in hc.seats):
                    self.slots[hand_no][slot] = self.index[self.t.hand.open_with(slot, {})]
                    cards[k] = (slot, 1)

    def _showdown(self) -> dict[str, Any]:
        t = self.t
        e = t.flow.engine
        assert e is not None and e.last_showdown is not None
        order = [sh.seat for sh in t.turns.last_showdown]
        out = []
        for sh, ph in zip(t.turns.last_showdown, e.last_showdown.players, strict=True):
            out.append({
                "seat": sh.seat, "name": t.lobby.players[sh.seat].name,
                "melds": [[self.index[c] for c in m.cards] for m in ph.melds],
                "laid_off": [{"card": self.index[lo.card], "onto_seat": order[lo.onto_player], "onto_meld": lo.onto_meld}
                             for lo in ph.laid_off],
                "deadwood": [self.index[c] for c in ph.deadwood],
                "penalty": ph.penalty,
            })
        return {"closer": t.turns.last_closer, "hands": out}

    def _step(self, i: int, env: wire.Envelope, hand: dict[str, Any] | None) -> dict[str, Any]:
        t = self.t
        e = t.flow.engine
        view = t.view()
        log = [ev.text for ev in list(t.events.entries)[max(0, len(t.events.entries) - (t.events.total - self.logged)):]]
        self.logged = t.events.total
        step: dict[str, Any] = {
            "index": i, "seat": env.seat, "kind": env.kind, "hand": hand["hand"] if hand else None,
            "phase": view.phase, "log": log, "to_play": view.to_play, "dealer": view.dealer,
            "move": env.kind in MOVE_KINDS, "pile": [], "stock_size": view.stock_size,
            "seats": [{"seat": s.seat, "total": s.total, "eliminated": s.eliminated, "cards": []}
                      for s in view.seats],
        }
        if hand is None:
            return step
        if e is not None and t.flow.hand_started and e.hand_no == hand["hand"]:
            self.table = ([(s, int(s in e.faces)) for s in e.discard_pile],
                          [[(s, int(s in e.faces)) for s in e.hands.get(seat["seat"], [])] for seat in step["seats"]])
        elif hand["penalties"] is None:
            return step  # the hand is not dealt yet
        # once scored, the engine has put the hand away: its last table stays until the next deal
        step["_hand_slots"] = True
        step["_pile"] = self.table[0]
        for seat, slots in zip(step["seats"], self.table[1], strict=False):
            seat["_slots"] = slots
        return step
