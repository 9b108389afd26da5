"""Write the game-level vectors ``protocol/vectors/game-*.json``.

A game vector is a whole transcript (a msgpack stream of envelope frames) and the verdict
``p2p-chinchon audit`` must reach: ``{result, seat, index, rule, winner, hands}`` (only the keys
present are checked). They are built from a real two-seat game played by this implementation
(seeded, k = 2 shadow shuffles, short limit), then altered **by construction**:
each cheating envelope is signed with the cheating seat's real key (the seeded identities are
known to this script), so a replay must find the rule, not a bad signature. Two more valid
games: one whose stock is re-shuffled (``game-ok-restock``), a three-seat game
(``game-ok-3-seats``) and one under the cut-and-choose shuffle proof (``game-ok-cut-and-choose``);
a three-seat game that goes on without a seat gone for good (``game-ok-removal``), a removal
started by the wrong seat (``game-removal-out-of-order``) and a record holding a fault of a seat
after its removal (``game-removed-seat-fault``).

    python protocol/make_game_vectors.py            # rewrites protocol/vectors/game-*.json
    python protocol/make_game_vectors.py --check    # exit 1 naming each file that would change

The games are played in one thread by a deterministic driver with fixed addresses in the
seating, so the output is byte-reproducible; ``tests/test_vector_drift.py`` regenerates it and
fails on any difference with the committed files.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "protocol"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from make_vectors import blob, write_or_check  # noqa: E402
from p2p_chinchon import deck  # noqa: E402
from p2p_chinchon.engine import make_rules  # noqa: E402
from p2p_chinchon.identity import Identity  # noqa: E402
from p2p_chinchon.local import seat_rng  # noqa: E402
from p2p_chinchon.table import Table  # noqa: E402
from p2p_chinchon.wire import Envelope, decode_envelope, make_envelope  # noqa: E402

SEED = 2026
THREE_SEAT_SEED = 3  # three hands with limit 15
RESTOCK_SEED = 4  # with limit 5 and close_max_unmatched 0 this game re-shuffles its stock
OUT = ROOT / "protocol" / "vectors"


@functools.lru_cache(maxsize=4)
def play(seed: int = SEED, seats: int = 2, max_seats: int | None = None, **options) -> tuple[list[bytes], list[Identity]]:
    """A classic game of ``seats`` seats (``options`` over ``limit=12``), played in this thread by the deterministic self-play driver of
    ``benchmarks/audit.py`` (the same Table code as a live node; only delivery differs), with
    fixed mesh addresses in the seating, so the transcript is byte-reproducible."""
    from audit import self_play  # type: ignore[import-not-found]  # benchmarks/audit.py: not in mypy's files

    game = self_play(seats, seed=seed, k=2, rules=make_rules("classic", {"limit": 12, **options}), max_seats=max_seats)
    assert game.fault is None and game.winner is not None
    # self_play derives each seat's identity from the seat's seeded stream, first thing
    ids = [Identity.generate(seat_rng(seed, i)) for i in range(seats)]
    return game.frames, ids


def first(envs: list[Envelope], kind: str, after: int = 0, seat: int | None = None) -> int:
    return next(i for i, e in enumerate(envs) if i >= after and e.kind == kind and (seat is None or e.seat == seat))


def resign(e: Envelope, ident: Identity, **changes) -> Envelope:
    f: dict[str, Any] = {"game": e.game, "seq": e.seq, "seat": e.seat, "prev": e.prev, "kind": e.kind, "body": dict(e.body)}
    f.update(changes)
    return make_envelope(ident.private_key, **f)


def state_at(frames: list[bytes], index: int) -> Table:
    t = Table.observer()
    for f in frames[:index]:
        t.replay(f)
    return t


def vector(name: str, desc: str, frames: list[bytes], verdict: dict) -> dict:
    return {"name": f"game-{name}", "layer": "game", "description": desc,
            "input": {"transcript": blob(b"".join(frames))}, "verdict": verdict}


def build() -> list[dict]:
    frames, ids = play()
    envs = [decode_envelope(f) for f in frames]
    full = state_at(frames, len(frames))
    assert full.flow.finished and full.flow.winner is not None
    out = [vector("ok-2-seats", "a complete two-seat game (classic, limit 12, k = 2)", frames,
                  {"result": "ok", "winner": full.flow.winner, "hands": len(full.turns.score_history)})]

    # torn tail: the last frame cut in half (a crash while writing)
    out.append(vector("torn-tail", "the last envelope is cut short; every complete one is valid",
                      frames[:-1] + [frames[-1][: len(frames[-1]) // 2]], {"result": "incomplete"}))

    # an illegal discard: a slot the seat does not hold, validly signed by that seat
    i = first(envs, "discard")
    t = state_at(frames, i)
    e = envs[i]
    foreign = t.flow.game().stock[-1]
    bad = resign(e, ids[e.seat], body={**e.body, "slot": foreign})
    out.append(vector("discard-not-held", "a seat discards a stock slot it never drew (signed by it)",
                      frames[:i] + [bad.encode()], {"result": "cheat", "seat": e.seat, "index": i, "rule": "not_in_hand"}))

    # out of turn: the other seat sends the draw
    i = first(envs, "draw")
    e = envs[i]
    other = 1 - e.seat
    bad = resign(e, ids[other], seat=other)
    out.append(vector("out-of-turn", "the seat that is not to play sends a draw",
                      frames[:i] + [bad.encode()], {"result": "cheat", "seat": other, "index": i, "rule": "not_your_turn"}))

    # a wrong shuffle proof, re-signed by the shuffler
    i = first(envs, "shuffle", seat=1)
    e = envs[i]
    proof = bytearray(e.body["proof"])
    proof[40] ^= 1
    bad = resign(e, ids[1], body={**e.body, "proof": bytes(proof)})
    out.append(vector("wrong-shuffle-proof", "seat 1's shuffle proof has one byte changed (re-signed by seat 1)",
                      frames[:i] + [bad.encode()], {"result": "cheat", "seat": 1, "index": i, "rule": "shuffle"}))

    # a shuffle that duplicates a card: re-mask slot 0 into slot 1, with a fresh (invalid) proof
    t = state_at(frames, i)
    cts = list(t.hand.cts)
    cts[1] = deck.remask(cts[0], 12345, t.hand.crypto().joint)
    ctx = deck.Context(t.lobby.game, t.hand.hand_no, 1)
    _, proof2 = deck.shuffle(ctx, t.hand.crypto().joint, list(t.hand.cts), seat_rng("dup", 1), k=t.lobby.proof_rounds)
    bad = resign(e, ids[1], body={**e.body, "deck": deck.encode_deck(cts), "proof": proof2})
    out.append(vector("shuffle-duplicates-card", "seat 1 outputs a deck holding one card twice (its proof is for another deck)",
                      frames[:i] + [bad.encode()], {"result": "cheat", "seat": 1, "index": i, "rule": "shuffle"}))

    # a wrong decryption share in the deal
    i = first(envs, "deal_shares", seat=1)
    e = envs[i]
    shares = list(e.body["shares"])
    s = bytearray(shares[0])
    s[-1] ^= 1
    shares[0] = bytes(s)
    bad = resign(e, ids[1], body={**e.body, "shares": shares})
    out.append(vector("wrong-decryption-share", "one of seat 1's deal shares has a bad DLEQ proof",
                      frames[:i] + [bad.encode()], {"result": "cheat", "seat": 1, "index": i, "rule": "share"}))

    # a secret that does not match the key share
    i = first(envs, "secret", seat=0)
    e = envs[i]
    bad = resign(e, ids[0], body={**e.body, "secret": (7).to_bytes(32, "little")})
    out.append(vector("wrong-secret", "seat 0 reveals a per-hand secret that does not open its key share",
                      frames[:i] + [bad.encode()], {"result": "cheat", "seat": 0, "index": i, "rule": "secret"}))

    # broken chain: a validly signed envelope whose prev is not the previous hash
    i = first(envs, "draw")
    e = envs[i]
    bad = resign(e, ids[e.seat], prev=bytes(32))
    out.append(vector("broken-chain", "a validly signed envelope that links to another history: a fork alone "
                      "blames nobody (its signer may follow a history that someone else's equivocation split)",
                      frames[:i] + [bad.encode()], {"result": "corrupt", "index": i}))

    # a bad signature (one bit) in the middle: damage, not attributable
    i = len(frames) // 2
    f = bytearray(frames[i])
    f[-3] ^= 0x10
    out.append(vector("bad-signature", "one bit of one signature flipped: a damaged file, blamed on nobody",
                      frames[:i] + [bytes(f)] + frames[i + 1:], {"result": "corrupt", "index": i}))

    # replay from another game: an envelope signed for another game id
    i = first(envs, "draw")
    e = envs[i]
    bad = resign(e, ids[e.seat], game=bytes(16))
    out.append(vector("replay-other-game", "an envelope from another game is spliced in: not attributable",
                      frames[:i] + [bad.encode()], {"result": "corrupt", "index": i}))

    # equivocation: seat 0 stops the table with two different discards signed by seat 1
    i = first(envs, "discard", seat=1)
    e = envs[i]
    t = state_at(frames, i)
    hand = t.flow.game().hands[1]
    other_slot = next(s for s in hand if s != e.body["slot"])
    twin = resign(e, ids[1], body={**e.body, "slot": other_slot})
    fault = make_envelope(ids[0].private_key, game=e.game, seq=i + 1, seat=0, prev=envs[i].hash(), kind="fault",
                          body={"accused": 1, "rule": "equivocation", "reason": "two different signed envelopes for one seq",
                                "evidence": [e.encode(), twin.encode()]})
    out.append(vector("equivocation", "seat 0 stops the table holding two different discards signed by seat 1 for one position",
                      frames[: i + 1] + [fault.encode()], {"result": "accused", "seat": 1, "rule": "equivocation"}))

    # envelope 0 must be the offer; a frame written twice is out of place
    out.append(vector("first-not-offer", "the game without its offer: a transcript starts with the host's offer, "
                      "and nothing else says whose key signed the lobby: damage, not attributable",
                      frames[1:], {"result": "corrupt", "index": 0}))
    i = first(envs, "draw")
    out.append(vector("duplicate-frame", f"envelope {i} written twice in a row: the copy stands where seq {i + 1} "
                      "belongs (an envelope copied from another position, not attributable)",
                      frames[: i + 1] + frames[i:], {"result": "corrupt", "index": i + 1}))

    # rule ids of a close and a show with the wrong slots (checked before any share)
    i = first(envs, "discard", after=first(envs, "deal_shares"))
    e = envs[i]
    t = state_at(frames, i)
    kept = [x for x in t.flow.game().hands[e.seat] if x != e.body["slot"]]
    wrong = kept[:-1] + [t.flow.game().stock[0]]
    bad = resign(e, ids[e.seat], kind="close", body={"hand": e.body["hand"], "slot": e.body["slot"],
                                                    "shares": [{"slot": x, "share": bytes(96)} for x in wrong]})
    out.append(vector("close-wrong-slots", "a close whose shares are for six kept slots and a stock slot (not "
                      "exactly the seven kept ones): rule close, before any share is checked", frames[:i] + [bad.encode()],
                      {"result": "cheat", "seat": e.seat, "index": i, "rule": "close"}))
    i = first(envs, "show")
    e = envs[i]
    shares = list(e.body["shares"])
    shares[0] = {**shares[0], "slot": state_at(frames, i).flow.game().close_discard}
    bad = resign(e, ids[e.seat], body={**e.body, "shares": shares})
    out.append(vector("show-wrong-slots", "a show with the closer's face-down slot in place of one of its own: "
                      "rule show", frames[:i] + [bad.encode()], {"result": "cheat", "seat": e.seat, "index": i, "rule": "show"}))

    # verdict classes: a chained leave; a fault that accuses nobody
    i = first(envs, "draw", after=first(envs, "deal_shares"))
    e = envs[i]
    leave = make_envelope(ids[1].private_key, game=e.game, seq=i, seat=1, prev=e.prev, kind="leave",
                          body={"reason": "left the table"})
    out.append(vector("leave-chained", "seat 1 leaves mid-game at a two-seat table (no seat to play on with): the "
                      "leave is chained and ends the table; not a fault: incomplete, naming seat 1 and rule left",
                      frames[:i] + [leave.encode()], {"result": "incomplete", "seat": 1, "rule": "left"}))
    nobody = make_envelope(ids[0].private_key, game=e.game, seq=i, seat=0, prev=e.prev, kind="fault",
                           body={"accused": 255, "rule": "absent", "reason": "no seat heard", "evidence": []})
    out.append(vector("fault-accusing-nobody", "seat 0 stops the table blaming nobody (absent): accused, no seat",
                      frames[:i] + [nobody.encode()], {"result": "accused", "seat": None, "rule": "absent"}))

    # a false accusation: seat 0 accuses seat 1 with seat 1's next, perfectly valid envelope
    i = first(envs, "draw", seat=1)
    fault = make_envelope(ids[0].private_key, game=envs[i].game, seq=i, seat=0, prev=envs[i].prev, kind="fault",
                          body={"accused": 1, "rule": "not_your_turn", "reason": "made up", "evidence": [frames[i]]})
    out.append(vector("false-accusation", "seat 0 stops the table accusing seat 1, whose evidence frame is a valid move",
                      frames[:i] + [fault.encode()], {"result": "cheat", "seat": 0, "rule": "false_accusation"}))

    # evidence that is the very envelope the chain holds: it proves nothing more (but a
    # seat's own opened cards, which nobody else can re-check)
    def quoting(rule: str) -> bytes:
        return make_envelope(ids[0].private_key, game=envs[i].game, seq=i + 1, seat=0, prev=envs[i].hash(),
                             kind="fault", body={"accused": 1, "rule": rule, "reason": "made up",
                                                 "evidence": [frames[i]]}).encode()
    out.append(vector("fault-quotes-chained-envelope", "seat 0 stops the table accusing seat 1 (not_in_hand), its "
                      "evidence seat 1's draw, which the chain holds just before the fault: a false accusation",
                      frames[: i + 1] + [quoting("not_in_hand")],
                      {"result": "cheat", "seat": 0, "rule": "false_accusation"}))
    out.append(vector("fault-private-open-chained", "seat 0 stops the table accusing seat 1 of face_mismatch (a "
                      "fault a seat finds opening its own cards), its evidence seat 1's draw, which the chain holds: "
                      "nobody else can re-check it: accused, unverifiable", frames[: i + 1] + [quoting("face_mismatch")],
                      {"result": "accused", "seat": None, "rule": "face_mismatch"}))

    # an away vote is never chained: after every check of an envelope at its place, unexpected
    i = first(envs, "draw", after=first(envs, "deal_shares"))
    e = envs[i]
    away = make_envelope(ids[0].private_key, game=e.game, seq=i, seat=0, prev=e.prev, kind="away",
                         body={"seat": e.seat, "hand": e.body["hand"]}) if e.seat != 0 else \
        make_envelope(ids[1].private_key, game=e.game, seq=i, seat=1, prev=e.prev, kind="away",
                      body={"seat": e.seat, "hand": e.body["hand"]})
    out.append(vector("away-chained", "a validly signed away vote written into the chain where a draw belongs: "
                      "never valid there: cheat, unexpected, naming its signer", frames[:i] + [away.encode()],
                      {"result": "cheat", "seat": away.seat, "index": i, "rule": "unexpected"}))
    forged = bytearray(away.encode())
    forged[-3] ^= 0x10
    out.append(vector("away-bad-signature", "the same away vote with one bit of its signature flipped: the "
                      "signature is checked first, as for any envelope: corrupt, nobody named",
                      frames[:i] + [bytes(forged)], {"result": "corrupt", "index": i}))
    return out


def restock_vector() -> dict:
    """A complete game whose stock runs out: the discard pile minus its top is re-shuffled by
    every seat (shuffle round 1) into slots numbered after the last slot."""
    frames, _ = play(RESTOCK_SEED, limit=5, close_max_unmatched=0)
    envs = [decode_envelope(f) for f in frames]
    assert any(e.kind == "shuffle" and e.body["round"] == 1 for e in envs)
    full = state_at(frames, len(frames))
    return vector("ok-restock", "a complete two-seat game (classic, limit 5, close only with every card "
                  "matched, k = 2) in which the stock runs out and the discard pile is re-shuffled",
                  frames, {"result": "ok", "winner": full.flow.winner, "hands": len(full.turns.score_history)})


DEAD_HAND_SEED = 1  # four seats, limit 5, close only with every card matched: a stock runs out twice


def dead_hand_vectors() -> list[dict]:
    """The table options ``max_reshuffles=1`` and ``reshuffle_end`` (docs/protocol.md "Hands",
    step 5): ``game-ok-dead-hand-scored``, a game in which a hand's stock runs out a second time
    and the hand is scored as it stands (every seat shows, from the seat whose turn it was);
    ``game-draw-after-dead-hand``, that record up to the first such ``show``, then a ``draw`` by
    the same seat: unexpected; ``game-ok-dead-hand-void``, the same table with ``void``."""
    options = {"seats": 4, "limit": 5, "close_max_unmatched": 0, "max_reshuffles": 1}
    frames, ids = play(DEAD_HAND_SEED, **options, reshuffle_end="score")
    envs = [decode_envelope(f) for f in frames]
    closed, i = False, None
    for j, e in enumerate(envs):
        closed = e.kind != "key_commit" and (closed or e.kind == "close")
        if e.kind == "show" and not closed:
            i = j
            break
    assert i is not None
    full = state_at(frames, len(frames))
    e = envs[i]
    draw = make_envelope(ids[e.seat].private_key, game=e.game, seq=i, seat=e.seat, prev=e.prev, kind="draw",
                         body={"hand": e.body["hand"], "source": "discard"})
    void, _ = play(DEAD_HAND_SEED, **options, reshuffle_end="void")
    assert any(decode_envelope(f).kind == "shuffle" and decode_envelope(f).body["round"] == 1 for f in void)
    vfull = state_at(void, len(void))
    return [
        vector("ok-dead-hand-scored", "a complete four-seat game (classic, limit 5, close only with every card "
               "matched, k = 2, max_reshuffles=1, reshuffle_end=score) in which a hand's stock runs out a second "
               "time: every seat shows, from the seat whose turn it was, and scores its arrangement as it stands",
               frames, {"result": "ok", "winner": full.flow.winner, "hands": len(full.turns.score_history)}),
        vector("draw-after-dead-hand", "the game-ok-dead-hand-scored record up to the first show of the hand "
               "scored as it stands, then a draw by the seat whose turn it was (which is to show first): "
               "unexpected", frames[:i] + [draw.encode()],
               {"result": "cheat", "seat": e.seat, "index": i, "rule": "unexpected"}),
        vector("ok-dead-hand-void", "the table of game-ok-dead-hand-scored with reshuffle_end=void: a hand whose "
               "stock runs out a second time is void (nobody scores, the deal moves on)",
               void, {"result": "ok", "winner": vfull.flow.winner, "hands": len(vfull.turns.score_history)}),
    ]


def three_seat_vector() -> dict:
    """A complete three-seat game of three hands: the shuffle order, the draw shares and the
    showdown go round a real table, and the deal moves round it."""
    frames, _ = play(THREE_SEAT_SEED, seats=3, limit=15)
    full = state_at(frames, len(frames))
    assert len(full.turns.score_history) >= 3
    return vector("ok-3-seats", "a complete three-seat game (classic, limit 15, k = 2) of three hands",
                  frames, {"result": "ok", "winner": full.flow.winner, "hands": len(full.turns.score_history)})


def end_vectors() -> list[dict]:
    """The game's end (docs/protocol.md "Removal", rule 5): ``game-ok-end-by-majority``, the
    ok-3-seats record without seat 2's ``game_end`` (two of three seats signed the end: the
    game is over, ok); ``game-removal-after-end``, the same record up to seat 0's
    ``game_end``, then seat 0's first ``remove`` of seat 1 with the away votes of seats 0 and
    2: seat 0 signed the end, and with seat 1 they are two of three seats: bad_removal."""
    frames, ids = play(THREE_SEAT_SEED, seats=3, limit=15)
    envs = [decode_envelope(f) for f in frames]
    full = state_at(frames, len(frames))
    i = first(envs, "game_end")
    assert [e.kind for e in envs[i:]] == ["game_end"] * 3
    at = state_at(frames, i + 1)
    votes = [make_envelope(ids[s].private_key, game=at.lobby.game, seq=i + 1, seat=s, prev=at.chain.head, kind="away",
                           body={"seat": 1, "hand": at.hand.hand_no}).encode() for s in (0, 2)]
    bad = make_envelope(ids[0].private_key, game=at.lobby.game, seq=i + 1, seat=0, prev=at.chain.head, kind="remove",
                        body={"seat": 1, "hand": at.hand.hand_no, "reason": "absent", "proof": votes})
    return [
        vector("ok-end-by-majority", "the game-ok-3-seats record without its last envelope, seat 2's game_end: "
               "seats 0 and 1, two of the three seats in the game, signed its end: complete", frames[:-1],
               {"result": "ok", "winner": full.flow.winner, "hands": len(full.turns.score_history)}),
        vector("removal-after-end", "the game-ok-3-seats record up to seat 0's game_end, then seat 0's remove of "
               "seat 1 (absent) with the away votes of seats 0 and 2: seat 0 signed the game's end, and with seat 1 "
               "they are two of three seats (rule 5)", frames[:i + 1] + [bad.encode()],
               {"result": "cheat", "seat": 0, "index": i + 1, "rule": "bad_removal"}),
    ]


def race_vectors() -> list[dict]:
    """A ``timeout`` fault that races the accused seat's move, in the three-seat game: seat 1
    signs it at the position of seat 0's draw. A seat that chains the fault judges it there; a
    seat whose chain already holds the draw stops with its own fault quoting it (blaming
    nobody), and the quoted fault is judged at its own position: one verdict for both."""
    frames, ids = play(THREE_SEAT_SEED, seats=3, limit=15)
    envs = [decode_envelope(f) for f in frames]
    i = first(envs, "draw", after=first(envs, "deal_shares"), seat=0)
    out = []
    for accused, name, verdict in ((2, "false", {"result": "cheat", "seat": 1, "index": i, "rule": "false_accusation"}),
                                   (0, "consistent", {"result": "accused", "seat": 0, "index": i, "rule": "timeout"})):
        q = make_envelope(ids[1].private_key, game=envs[i].game, seq=i, seat=1, prev=envs[i].prev, kind="fault",
                          body={"accused": accused, "rule": "timeout", "reason": "did not send draw in time", "evidence": []})
        own = make_envelope(ids[0].private_key, game=envs[i].game, seq=i + 1, seat=0, prev=envs[i].hash(), kind="fault",
                            body={"accused": 255, "rule": "stopped_by_peer", "evidence": [q.encode()],
                                  "reason": "seat 1 stopped the table off our chain: timeout"})
        whom = "seat 2, who was not to speak" if accused == 2 else "seat 0, who was to draw"
        out.append(vector(f"timeout-race-{name}-chained", f"three seats: seat 1 accuses {whom} of a timeout at the "
                          "position of seat 0's draw; this seat chained the fault there", frames[:i] + [q.encode()], verdict))
        out.append(vector(f"timeout-race-{name}-off-chain", "the same fault reached seat 0 after its draw: seat 0's "
                          "transcript holds the draw, then seat 0's fault quoting seat 1's (accusing nobody); the "
                          "quoted fault is judged at its own position, so both transcripts get one verdict",
                          frames[:i + 1] + [own.encode()], verdict))
    return out


def first_round_close_vector() -> dict:
    """``first_round_ban`` counts the closer's own turn as unfinished: in the last hand of the
    two-seat game, the dealer (the second to play) closes on its first turn, after the other
    seat has finished one. Its shares are real (the dealer's key of that hand, which its table
    still holds at the game's end), so the close fails on the ban alone."""
    from audit import self_play  # benchmarks/audit.py

    game = self_play(2, seed=SEED, k=2, rules=make_rules("classic", {"limit": 12}))
    frames, ids = play()
    assert game.frames == frames
    envs = [decode_envelope(f) for f in frames]
    h = max(e.body["hand"] for e in envs if e.kind == "discard")
    i = [j for j, e in enumerate(envs) if e.kind == "discard" and e.body["hand"] == h][1]
    e = envs[i]
    t = state_at(frames, i)
    assert t.flow.game().turns_taken[1 - e.seat] == 1 and t.flow.game().turns_taken[e.seat] == 0
    keypair = game.tables[e.seat].hand.hc.keypair
    ctx = deck.Context(t.lobby.game, h, e.seat)
    kept = [x for x in t.flow.game().hands[e.seat] if x != e.body["slot"]]
    shares = [{"slot": x, "share": deck.decryption_share(ctx, keypair, t.hand.cts[x], x, seat_rng("first-round", x))}
              for x in kept]
    bad = resign(e, ids[e.seat], kind="close", body={"hand": h, "slot": e.body["slot"], "shares": shares})
    return vector("first-round-close", "the dealer closes on its first turn of the last hand, after the other seat "
                  "has finished one: the closer's own turn does not count, so the first-round ban still holds",
                  frames[:i] + [bad.encode()], {"result": "cheat", "seat": e.seat, "index": i, "rule": "first_round_close"})


REENTRY_SEED = 7  # with three seats, limit 15, one re-entry while two seats remain: seat 0 re-enters


def reentry_vectors() -> list[dict]:
    """A complete three-seat game with a re-entry, and the same record whose ``reenter``
    names the next hand: the ``hand`` of a ``reenter`` is the hand just scored."""
    frames, ids = play(REENTRY_SEED, seats=3, limit=15, reentries=1, reentry_min_remaining=2)
    envs = [decode_envelope(f) for f in frames]
    i = first(envs, "reenter")
    e = envs[i]
    assert envs[i - 1].kind == "hand_digest" and envs[i - 1].body["hand"] == e.body["hand"]
    full = state_at(frames, len(frames))
    bad = resign(e, ids[e.seat], body={**e.body, "hand": e.body["hand"] + 1})
    return [
        vector("ok-reentry", "a complete three-seat game (classic, limit 15, one re-entry while two seats remain) in "
               f"which seat {e.seat} goes over the limit after hand {e.body['hand']} and re-enters", frames,
               {"result": "ok", "winner": full.flow.winner, "hands": len(full.turns.score_history)}),
        vector("reenter-next-hand", "the game-ok-reentry record up to its reenter, which names the next hand instead "
               "of the hand just scored", frames[:i] + [bad.encode()],
               {"result": "cheat", "seat": e.seat, "index": i, "rule": "wrong_hand"}),
    ]


def fewer_seated_vector() -> dict:
    """The deck is built for the seating's player count: an offer for 3 seats whose rules take
    two packs from 3 players (``decks`` 0, ``two_decks_from`` 3: 80 cards), seated with 2
    players, plays one pack of 40 (every shuffle carries 40 ciphertexts)."""
    frames, _ = play(SEED, seats=2, max_seats=3, decks=0, two_decks_from=3)
    envs = [decode_envelope(f) for f in frames]
    assert envs[0].body["max_seats"] == 3 and len(envs[1].body["players"]) == 2
    assert all(len(e.body["deck"]) == 40 * 64 for e in envs if e.kind == "shuffle" and e.body["round"] == 0)
    full = state_at(frames, len(frames))
    return vector("ok-fewer-seated", "a complete game offered for 3 seats (two packs from 3 players: 80 cards) "
                  "and seated with 2: the deck is built for the 2 seated, one pack of 40", frames,
                  {"result": "ok", "winner": full.flow.winner, "hands": len(full.turns.score_history)})


def cut_and_choose_vector() -> dict:
    """The two-seat game of ``game-ok-2-seats`` at a table whose rules choose the cut-and-choose
    shuffle proof (``shuffle_proof=cut-and-choose``, k = 2) instead of Terelius-Wikström."""
    frames, _ = play(SEED, shuffle_proof="cut-and-choose")
    assert decode_envelope(frames[0]).body["rules"]["shuffle_proof"] == "cut-and-choose"
    full = state_at(frames, len(frames))
    return vector("ok-cut-and-choose", "a complete two-seat game (classic, limit 12) whose rules choose the "
                  "cut-and-choose shuffle proof with k = 2", frames,
                  {"result": "ok", "winner": full.flow.winner, "hands": len(full.turns.score_history)})


def play_without(gone: int, at: str, seed: str = "removal") -> tuple[list[bytes], list[Identity]]:
    """A three-seat game (classic, limit 12, k = 2) in which seat ``gone`` stops answering for
    good when it is first to send ``at``: both others declare it absent, sign its removal and
    finish the game. One thread, a FIFO of deliveries, seeded streams: byte-reproducible."""
    from collections import deque

    from p2p_chinchon.autoplay import bot_decider
    from p2p_chinchon.bots.simple import SimpleBot
    from p2p_chinchon.rng import SeededRng
    from p2p_chinchon.table import Job, Send, run_job

    rules = make_rules("classic", {"limit": 12})
    ids = [Identity.generate(SeededRng(f"{seed}/id/{i}")) for i in range(3)]
    host = Table.create(ids[0], SeededRng(f"{seed}/rng/0"), name="t", rules=rules, max_seats=3,
                        addr="10.0.0.1:7300", proof_rounds=2, auto_agree=True)
    for i in (1, 2):
        host.lobby.seat_host(f"P{i}", ids[i].public_bytes, f"10.0.0.{i + 1}:7300")
    tables = [host] + [Table.joining(ids[i], SeededRng(f"{seed}/rng/{i}"), host.chain.frames[0], auto_agree=True,
                                     min_proof_rounds=1) for i in (1, 2)]
    bots = [bot_decider(SimpleBot(rules, SeededRng(f"{seed}/bot/{i}"))) for i in range(3)]
    inbox: deque = deque()
    dead = False

    def out(i: int, outs: list) -> None:
        for o in outs:
            if isinstance(o, Send):
                inbox.extend((j, o.frame) for j in range(3) if j != i and not (dead and j == gone))
            elif isinstance(o, Job):
                out(i, tables[i].job_done(o.id, run_job(o)))

    out(0, host.start())
    while True:
        step = host.expected()
        if not dead and step is not None and step.seat == gone and step.kind == at and not inbox:
            dead = True
            for i in range(3):
                if i != gone:
                    out(i, tables[i].absent(gone))
        if inbox:
            j, frame = inbox.popleft()
            out(j, tables[j].receive(frame, None))
            continue
        movers = [i for i in range(3) if not (dead and i == gone) and tables[i].needs_decision()]
        if not movers:
            break
        i = movers[0]
        out(i, tables[i].intent(bots[i](tables[i].view(), tables[i].needs_decision())))
    assert host.flow.finished and host.removal.removed == {gone: "absent"}, host.flow.fault
    return list(host.chain.frames), ids


def removal_vectors() -> list[dict]:
    """``game-ok-removal``: seat 2 goes silent for good when it is to draw; seats 0 and 1 each
    vote it away and sign its removal (the first ``remove`` carries both votes), the hand is
    void, they finish the game. ``game-removal-without-majority``: the same record up to the
    removal, whose first ``remove`` carries seat 0's own vote only (one of three seats)."""
    frames, ids = play_without(2, "draw")
    envs = [decode_envelope(f) for f in frames]
    full = state_at(frames, len(frames))
    i = first(envs, "remove")
    own = [v for v in envs[i].body["proof"] if decode_envelope(v).seat == 0]
    bad = resign(envs[i], ids[0], body=dict(envs[i].body, proof=own))
    after = i + 4  # a few envelopes after the removal is complete (every remove is in)
    assert all(e.kind != "remove" for e in envs[i + 2:after])
    late = make_envelope(ids[2].private_key, game=envs[0].game, seq=after, seat=2, prev=envs[after - 1].hash(),
                         kind="fault", body={"accused": 0, "rule": "timeout", "reason": "did not draw",
                                             "evidence": []})
    votes = list(envs[i].body["proof"])
    flipped = bytearray(next(v for v in votes if decode_envelope(v).seat == 1))
    flipped[-3] ^= 0x10  # one bit of seat 1's signature
    beside = resign(envs[i], ids[0], body=dict(envs[i].body, proof=[*votes, bytes(flipped)]))
    return [
        vector("removed-seat-fault", "the game-ok-removal record a few envelopes after seat 2's removal is "
               "complete, then a fault of seat 2 chained there (a removed seat may do nothing more: every seat "
               "drops it; a record that holds it judges nobody by it)",
               frames[:after] + [late.encode()],
               {"result": "incomplete", "seat": None, "index": after, "rule": "removed"}),
        vector("ok-removal", "a complete three-seat game (classic, limit 12, k = 2) in which seat 2 stops "
               "answering for good when it is to draw: seats 0 and 1 each vote it away and sign its removal "
               "('absent'; the first remove carries both votes), the hand is void, they finish the game; seat 2 "
               "is 'left'", frames,
               {"result": "ok", "winner": full.flow.winner, "hands": len(full.turns.score_history)}),
        vector("removal-without-majority", "the game-ok-removal record up to its first remove, whose proof "
               "carries seat 0's own away vote only: one vote of three seats is no majority",
               frames[:i] + [bad.encode()],
               {"result": "cheat", "seat": 0, "index": i, "rule": "bad_removal"}),
        vector("removal-bad-vote-beside-majority", "the game-ok-removal record up to its first remove, whose proof "
               "carries both good votes (a majority) and a third frame, seat 1's vote with one bit of its signature "
               "flipped: every frame must pass, so one bad frame spoils the proof",
               frames[:i] + [beside.encode()],
               {"result": "cheat", "seat": 0, "index": i, "rule": "bad_removal"}),
    ]


def all_files() -> dict[Path, str]:
    """Every game vector file this script writes: path -> text (deterministic)."""
    return {OUT / f"{vec['name']}.json": json.dumps(vec, indent=1, ensure_ascii=False) + "\n"
            for vec in build() + [restock_vector(), *dead_hand_vectors(), three_seat_vector(), cut_and_choose_vector(),
                                  *removal_vectors(), *end_vectors(), *race_vectors(), fewer_seated_vector(),
                                  first_round_close_vector(), *reentry_vectors()]}


def main(argv: list[str]) -> int:
    return write_or_check(all_files(), lambda p: p.name.startswith("game-"), argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
