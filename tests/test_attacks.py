"""Red-team attacks at the table level that the implementation handles correctly.

Every table runs in-process (no sockets, ``harness.Net``). A cheating seat is a
``harness.Stall`` table that holds back one automatic message; the test then signs a crafted
(validly signed, rule-breaking) envelope with the cheater's real key, as a modified client
would, and checks that every honest node stops with a fault naming the cheater and the rule,
and that ``audit`` of an honest transcript agrees. Proof rounds are tiny (k=1..2) for speed;
the checks do not depend on k.

Attacks that are NOT handled are described in the red-team report (reproductions outside
tests/), not here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from harness import CHEATER, Net, crypto_of, game_of, shuffle_body, stall
from p2p_chinchon import deck, table as tbl, view as v, wire
from p2p_chinchon.audit import audit_frames
from p2p_chinchon.deck.group import L
from p2p_chinchon.engine import make_rules
from p2p_chinchon.identity import Identity
from p2p_chinchon.rng import SeededRng


def assert_caught(net: Net, rules: set[str], cheater: int = CHEATER, *, confirmed: bool = True) -> None:
    for t in net.honest(cheater):
        assert t.flow.fault is not None, "honest seat did not notice"
        assert t.flow.fault.seat == cheater, t.flow.fault
        assert t.flow.fault.rule in rules, t.flow.fault
        last = t.chain.envelopes[-1]
        assert last.kind == "fault" and last.body["accused"] == cheater
        assert last.body["evidence"], "the rejected frame is kept as evidence"
    report = audit_frames(net.honest(cheater)[0].chain.frames)
    assert report.verdict == "accused" and report.seat == cheater, report.summary()
    if confirmed:
        assert "confirmed" in report.detail, report.summary()


def hand_of(t: tbl.Table, seat: int) -> list[int]:
    return list(t.flow.game().hands[seat])


@pytest.fixture
def at_draw():
    """Three seats, dealt, the first player to move must draw."""
    net = Net(3, seed=2)
    assert net.run(net.expects("draw"))
    return net


# ----------------------------------------------------------------------------- keys


def test_key_share_not_matching_commitment():
    """Commit to one key, reveal another (a rogue key chosen after seeing others' shares)."""
    net = Net(3, seed=3, classes={CHEATER: stall("key_share")})
    assert net.run(net.expects("key_share", CHEATER))
    ct = net.tables[CHEATER]
    other = deck.KeyPair.generate(SeededRng("rogue"))
    share = deck.make_key_share(ct.hand.ctx(CHEATER), other, SeededRng("w"))
    net.inject(CHEATER, net.craft(CHEATER, "key_share", {"hand": ct.hand.hand_no, "share": share, "nonce": other.nonce}))
    assert_caught(net, {"key_share"})


def test_key_share_copied_from_another_seat():
    """Copy seat 0's published key share, proof and nonce (and its commitment before that)."""
    net = Net(3, seed=4, classes={CHEATER: stall("key_commit", "key_share")})
    assert net.run(net.expects("key_commit", CHEATER))
    t0 = net.tables[0]
    seat0_commit = next(e for e in t0.chain.envelopes if e.kind == "key_commit" and e.seat == 0).body["commit"]
    ct = net.tables[CHEATER]
    net.inject(CHEATER, net.craft(CHEATER, "key_commit", {"hand": ct.hand.hand_no, "commit": seat0_commit}))
    assert net.run(net.expects("key_share", CHEATER))
    s0 = next(e for e in t0.chain.envelopes if e.kind == "key_share" and e.seat == 0).body
    net.inject(CHEATER, net.craft(CHEATER, "key_share", {"hand": ct.hand.hand_no, "share": s0["share"], "nonce": s0["nonce"]}))
    assert_caught(net, {"key_share"})


# ----------------------------------------------------------------------------- shuffle


@pytest.mark.parametrize("variant", ["duplicate_slot", "reuse_input_with_other_proof", "wrong_round", "short_deck"])
def test_bad_shuffle_outputs(variant):
    net = Net(3, seed=5, classes={CHEATER: stall("shuffle")})
    assert net.run(net.expects("shuffle", CHEATER))
    ct = net.tables[CHEATER]
    out, proof = deck.shuffle(ct.hand.ctx(CHEATER), crypto_of(ct).joint, ct.hand.cts, SeededRng("s"), k=ct.lobby.proof_rounds)
    over = {}
    if variant == "duplicate_slot":  # a card cloned over another one, proof of the real shuffle
        out = [out[0]] + list(out[:-1])
    elif variant == "reuse_input_with_other_proof":  # pass the input on (the first shuffler's
        # input is the unmasked initial deck, which no one may send: use its output reversed)
        out = list(ct.hand.cts) if ct.hand.cts[0].c1 != deck.GROUP.identity else out[::-1]
    elif variant == "wrong_round":
        over = {"round": 1}
    elif variant == "short_deck":
        out = out[:-1]
    net.inject(CHEATER, net.craft(CHEATER, "shuffle", shuffle_body(net, CHEATER, out, proof, **over)))
    for t in net.honest():
        assert t.flow.fault is not None and t.flow.fault.seat == CHEATER and t.flow.fault.rule == "shuffle", t.flow.fault
    r = audit_frames(net.tables[0].chain.frames)
    assert r.verdict == "accused" and r.seat == CHEATER and "confirmed" in r.detail, r.summary()


def test_unmasked_first_shuffle_is_rejected():
    """The first shuffler may not publish the public initial deck (identity c1) as its output."""
    net = Net(3, seed=6, classes={CHEATER: stall("shuffle")})
    assert net.run(net.expects("shuffle"))
    order = net.tables[0].hand.shuffle_order()
    if order[0] != CHEATER:
        pytest.skip("seed must make the cheater shuffle first")  # pragma: no cover
    ct = net.tables[CHEATER]
    body = {"hand": ct.hand.hand_no, "round": 0, "deck": deck.encode_deck(ct.hand.cts), "proof": b""}
    net.inject(CHEATER, net.craft(CHEATER, "shuffle", body))
    assert_caught(net, {"shuffle"})


def test_deferred_bad_proof_blocks_secret_and_is_pinned_by_audit():
    """With deferred verification an invalid proof is accepted first, then stops the table
    before anyone reveals a secret; audit pins the shuffle itself."""
    net = Net(3, seed=7, classes={CHEATER: stall("shuffle")}, defer=True)
    assert net.run(net.expects("shuffle", CHEATER))
    ct = net.tables[CHEATER]
    out, proof = deck.shuffle(ct.hand.ctx(CHEATER), crypto_of(ct).joint, ct.hand.cts, SeededRng("s"), k=ct.lobby.proof_rounds)
    bad = bytearray(proof)
    bad[-1] ^= 1
    net.inject(CHEATER, net.craft(CHEATER, "shuffle", shuffle_body(net, CHEATER, out, bytes(bad))))
    for t in net.honest():
        assert t.flow.fault is not None and t.flow.fault.seat == CHEATER and t.flow.fault.rule == "shuffle"
        assert not any(e.kind == "secret" for e in t.chain.envelopes)
    r = audit_frames(net.tables[0].chain.frames)
    assert r.verdict == "cheat" and r.seat == CHEATER and r.rule == "shuffle", r.summary()


# ----------------------------------------------------------------------------- shares


@pytest.mark.parametrize("variant", ["swapped", "missing_one", "extra_one", "other_seats_share", "upcard_dropped"])
def test_bad_deal_shares(variant):
    net = Net(3, seed=8, classes={CHEATER: stall("deal_shares")})
    assert net.run(net.expects("deal_shares", CHEATER))
    ct = net.tables[CHEATER]
    slots = ct.hand.deal_share_slots(CHEATER)
    shares = [ct.hand.my_share(s) for s in slots]
    if variant == "swapped":
        shares[0], shares[1] = shares[1], shares[0]
    elif variant == "missing_one":
        shares = shares[:-1]
    elif variant == "extra_one":
        shares = shares + [shares[0]]
    elif variant == "other_seats_share":
        seat0 = next(e for e in net.tables[0].chain.envelopes if e.kind == "deal_shares" and e.seat == 0)
        s0 = dict(zip(ct.hand.deal_share_slots(0), seat0.body["shares"], strict=True))
        common = next(i for i, s in enumerate(slots) if s in s0)
        shares[common] = s0[slots[common]]
    elif variant == "upcard_dropped":  # the right count, but a stock slot instead of the upcard
        up = game_of(ct).upcard_slot()
        i = slots.index(up)
        shares[i] = ct.hand.my_share(game_of(ct).stock[0] if game_of(ct).stock else up + 1)
    net.inject(CHEATER, net.craft(CHEATER, "deal_shares", {"hand": ct.hand.hand_no, "shares": shares}))
    assert_caught(net, {"share"})


def test_draw_share_for_a_slot_not_drawn():
    net = Net(3, seed=9, classes={CHEATER: stall("draw_share")})
    # a stock draw by someone else than the cheater, then the cheater owes a draw share
    assert net.run(net.expects("draw_share", CHEATER))
    ct = net.tables[CHEATER]
    drawn = ct.turns.pending_draw_slot
    other = game_of(ct).stock[0]  # the next stock card: a share for it would leak the stock order
    assert other != drawn
    net.inject(CHEATER, net.craft(CHEATER, "draw_share",
                                  {"hand": ct.hand.hand_no, "slot": other, "share": ct.hand.my_share(other)}))
    assert_caught(net, {"share"})


def test_draw_share_with_the_share_of_another_slot():
    net = Net(3, seed=9, classes={CHEATER: stall("draw_share")})
    assert net.run(net.expects("draw_share", CHEATER))
    ct = net.tables[CHEATER]
    drawn = ct.turns.pending_draw_slot
    share = ct.hand.my_share(game_of(ct).stock[0])  # right slot number, share made for another slot
    net.inject(CHEATER, net.craft(CHEATER, "draw_share", {"hand": ct.hand.hand_no, "slot": drawn, "share": share}))
    assert_caught(net, {"share"})


# ----------------------------------------------------------------------------- moves


@pytest.fixture
def cheater_to_discard():
    net = Net(3, seed=10)
    bot = net.bots[CHEATER]
    net.bots[CHEATER] = lambda view, need: bot(view, need) if need != "discard" else None
    assert net.run(net.expects("discard", CHEATER))
    return net


def test_discard_a_card_of_another_seat(cheater_to_discard):
    net = cheater_to_discard
    ct = net.tables[CHEATER]
    slot = hand_of(ct, 0)[0]
    body = {"hand": ct.hand.hand_no, "slot": slot, "share": ct.hand.my_share(slot)}
    net.inject(CHEATER, net.craft(CHEATER, "discard", body))
    assert_caught(net, {"not_in_hand"})


def test_discard_with_a_share_for_another_slot(cheater_to_discard):
    net = cheater_to_discard
    ct = net.tables[CHEATER]
    mine = hand_of(ct, CHEATER)
    body = {"hand": ct.hand.hand_no, "slot": mine[0], "share": ct.hand.my_share(mine[1])}
    net.inject(CHEATER, net.craft(CHEATER, "discard", body))
    assert_caught(net, {"share"})


@pytest.mark.parametrize("variant", ["facedown_listed", "duplicate", "foreign_slot", "six_only"])
def test_close_listing_wrong_slots(cheater_to_discard, variant):
    net = cheater_to_discard
    ct = net.tables[CHEATER]
    mine = hand_of(ct, CHEATER)
    down, kept = mine[0], mine[1:]
    if variant == "facedown_listed":
        kept = mine[:7]
    elif variant == "duplicate":
        kept = kept[:-1] + [kept[0]]
    elif variant == "foreign_slot":
        kept = kept[:-1] + [hand_of(ct, 0)[0]]
    elif variant == "six_only":
        kept = kept[:-1]
    body = {"hand": ct.hand.hand_no, "slot": down,
            "shares": [{"slot": s, "share": ct.hand.my_share(s)} for s in kept]}
    net.inject(CHEATER, net.craft(CHEATER, "close", body))
    assert_caught(net, {"close"})


def test_move_for_another_hand_number(cheater_to_discard):
    net = cheater_to_discard
    ct = net.tables[CHEATER]
    body = ct.turns.discard_body("discard", hand_of(ct, CHEATER)[0])
    body["hand"] += 1
    net.inject(CHEATER, net.craft(CHEATER, "discard", body))
    assert_caught(net, {"wrong_hand"})


def test_secret_revealed_early_is_rejected(cheater_to_discard):
    """A seat may not publish its per-hand secret during play (it would only expose itself,
    but the table must keep the chain well-formed)."""
    net = cheater_to_discard
    ct = net.tables[CHEATER]
    net.inject(CHEATER, net.craft(CHEATER, "secret", {"hand": ct.hand.hand_no, "secret": ct.hand.hc.keypair.secret_bytes()}))
    assert_caught(net, {"unexpected"})


def test_out_of_turn_by_a_waiting_seat(at_draw):
    net = at_draw
    to_play = net.tables[0].expected().seat
    cheater = (to_play + 1) % 3
    net.inject(cheater, net.craft(cheater, "draw", {"hand": net.tables[0].hand.hand_no, "source": "stock"}))
    assert_caught(net, {"not_your_turn"}, cheater)


def test_reenter_by_a_seat_not_offered(at_draw):
    net = at_draw
    to_play = net.tables[0].expected().seat
    cheater = (to_play + 1) % 3
    net.inject(cheater, net.craft(cheater, "reenter", {"hand": net.tables[0].hand.hand_no, "accept": True}))
    assert_caught(net, {"not_your_turn"}, cheater)


# ----------------------------------------------------------------------------- end of hand


def _to_secret(seed: int) -> Net:
    net = Net(3, seed=seed, classes={CHEATER: stall("secret")})
    assert net.run(net.expects("secret", CHEATER))
    return net


@pytest.mark.parametrize("variant", ["random", "non_canonical", "zero", "other_seat", "off_by_one"])
def test_bad_secret(variant):
    net = _to_secret(11)
    ct = net.tables[CHEATER]
    if variant == "random":
        secret = deck.KeyPair.generate(SeededRng("x")).secret_bytes()
    elif variant == "non_canonical":  # x + L: same point under a non-reducing multiplication
        secret = (ct.hand.keypair().x + L).to_bytes(32, "little")
    elif variant == "zero":
        secret = bytes(32)
    elif variant == "other_seat":  # replay the secret seat 0 revealed just before
        secret = next(e for e in net.tables[0].chain.envelopes if e.kind == "secret" and e.seat == 0).body["secret"]
    else:
        secret = (ct.hand.keypair().x + 1).to_bytes(32, "little")
    net.inject(CHEATER, net.craft(CHEATER, "secret", {"hand": ct.hand.hand_no, "secret": secret}))
    assert_caught(net, {"secret"})


@pytest.mark.parametrize("variant", ["digest", "totals"])
def test_hand_digest_lie(variant):
    net = Net(3, seed=12, classes={CHEATER: stall("hand_digest")})
    assert net.run(net.expects("hand_digest", CHEATER))
    ct = net.tables[CHEATER]
    body: dict[str, Any] = {"hand": ct.hand.hand_no, "digest": crypto_of(ct).digest, "totals": list(game_of(ct).totals)}
    if variant == "digest":
        body["digest"] = bytes(32)
    else:
        body["totals"][CHEATER] -= 5
    net.inject(CHEATER, net.craft(CHEATER, "hand_digest", body))
    assert_caught(net, {"digest_mismatch"})


def test_game_end_naming_another_winner():
    net = Net(2, seed=13, rules=make_rules("classic", {"limit": 15}), classes={CHEATER: stall("game_end")})
    assert net.run(net.expects("game_end", CHEATER))
    t0 = net.tables[0]
    liar_winner = 1 - t0.flow.winner if t0.flow.winner is not None else 0
    net.inject(CHEATER, net.craft(CHEATER, "game_end", {"winner": liar_winner, "digest": t0.chain.head}))
    assert_caught(net, {"digest_mismatch"})


# ----------------------------------------------------------------------------- lobby


def test_agree_to_other_rules_and_bad_toss():
    net = Net(3, seed=14, classes={CHEATER: stall("agree", "toss")})
    assert net.run(net.expects("agree", CHEATER))
    t0 = net.tables[0]
    seating = t0.lobby.seating_hash()
    net.inject(CHEATER, net.craft(CHEATER, "agree", {"rules_hash": bytes(32), "seating_hash": seating,
                                                     "toss_commit": bytes(32)}))
    assert_caught(net, {"disagree"})

    net = Net(3, seed=14, classes={CHEATER: stall("toss")})
    assert net.run(net.expects("toss", CHEATER))
    net.inject(CHEATER, net.craft(CHEATER, "toss", {"nonce": bytes(32)}))
    assert_caught(net, {"toss"})


def _host_and_joiner(seating_players):
    rules = make_rules("classic", {"limit": 30})
    ids = [Identity.generate(SeededRng(f"lobby{i}")) for i in range(3)]
    host = tbl.Table.create(ids[0], SeededRng("h"), name="t", rules=rules, max_seats=2,
                            addr="127.0.0.1:1", proof_rounds=2)
    joiner = tbl.Table.joining(ids[1], SeededRng("j"), host.chain.frames[0], min_proof_rounds=1)
    players = seating_players(ids)
    seat = wire.make_envelope(ids[0].private_key, game=host.lobby.game, seq=1, seat=0, prev=host.chain.head,
                              kind="seating", body={"players": players}).encode()
    return joiner, joiner.receive(seat, 0)


def _p(ident, name="x"):
    return {"name": name, "key": ident.public_bytes, "addr": "127.0.0.1:2", "addrs": []}


@pytest.mark.parametrize("variant", ["twice", "host_not_first", "over_max"])
def test_bad_seating(variant):
    def players(ids):
        if variant == "twice":  # one key in two seats
            return [_p(ids[0]), _p(ids[0], "y")]
        if variant == "host_not_first":
            return [_p(ids[1]), _p(ids[0])]
        return [_p(ids[0]), _p(ids[1]), _p(ids[2])]

    joiner, outs = _host_and_joiner(players)
    assert joiner.flow.fault is not None and joiner.flow.fault.rule == "bad_seating" and joiner.flow.fault.seat == 0
    assert any(isinstance(o, tbl.Stopped) for o in outs)


def test_offer_with_out_of_range_proof_rounds_is_malformed():
    rules = make_rules("classic", {"limit": 30})
    ident = Identity.generate(SeededRng("o"))
    from p2p_chinchon.engine import RulesError

    for k in (0, 129):
        with pytest.raises((wire.WireError, RulesError)):
            tbl.Table.create(ident, SeededRng("h"), name="t", rules=rules, max_seats=2, addr="a:1", proof_rounds=k)


def test_frames_before_the_seating_wait_in_the_buffer():
    """Envelopes that overtake the seating (links race) wait in the buffer and are applied in
    order once the seating arrives (a watcher key that holds no seat follows the same chain)."""
    net = Net(3, seed=15)
    assert net.run(lambda n: len(n.tables[0].chain.envelopes) > 12)
    frames = list(net.tables[0].chain.frames)
    watcher = tbl.Table.joining(Identity.generate(SeededRng("watcher")), SeededRng("w"), frames[0], min_proof_rounds=1)
    for f in reversed(frames[1:]):
        assert watcher.receive(f, 0) is not None
    assert watcher.flow.fault is None and len(watcher.chain.envelopes) == len(frames)
    assert watcher.chain.head == net.tables[0].chain.head and watcher.lobby.me is None


# ----------------------------------------------------------------------------- network


def test_exact_replay_is_dropped(at_draw):
    """A network attacker (or a reconnecting peer) replays old envelopes of this game."""
    net = at_draw
    t = net.tables[0]
    n = len(t.chain.envelopes)
    for f in list(t.chain.frames):
        assert t.receive(f, 2) == []
    assert t.flow.fault is None and len(t.chain.envelopes) == n
    assert net.run() and all(x.flow.finished for x in net.tables)


def test_garbage_frames_do_not_crash():
    net = Net(3, seed=16)
    assert net.run(net.expects("draw"))
    t = net.tables[0]
    for junk in (b"", b"\x91" * 100_000 + b"\xc0", b"\xdd\xff\xff\xff\xff", b"\x98" + bytes(1 << 20), b"\xc1"):
        fresh = tbl.Table.joining(Identity.generate(SeededRng("watcher")), SeededRng("z"), t.chain.frames[0], min_proof_rounds=1)
        for f in t.chain.frames[1:]:
            fresh.receive(f, 0)
        before = len(fresh.chain.envelopes)
        outs = fresh.receive(junk, 2)
        # bytes that do not decode prove nothing against anyone (links are not MACed): dropped,
        # kept as evidence naming the link's seat, and the table goes on
        assert fresh.flow.fault is None and len(fresh.chain.envelopes) == before
        ev = [o for o in outs if isinstance(o, tbl.Evidence)]
        assert ev and ev[0].rule == "malformed" and ev[0].seat == 2 and ev[0].frames == (junk,)


def test_flood_of_future_frames_is_bounded(at_draw):
    """Signed envelopes ahead of the chain past its bound are not kept, and accuse nobody (we
    may be the one behind): the link's seat is asked once for what follows our chain."""
    net = at_draw
    t = net.tables[0]
    base = len(t.chain.envelopes)
    asked = []
    for i in range(tbl.MAX_BUFFERED + 8):
        frame = net.craft(2, "draw", {"hand": t.hand.hand_no, "source": "stock"}, seq=base + 1 + i, prev=bytes(32))
        outs = t.receive(frame, 2)
        assert not [o for o in outs if isinstance(o, tbl.Send)]
        asked += [o for o in outs if isinstance(o, tbl.Resync)]
    assert sum(len(x) for x in t.chain.buffer.values()) <= tbl.MAX_BUFFERED
    assert t.flow.fault is None and asked == [tbl.Resync(2, base)]
    far = net.craft(2, "draw", {"hand": t.hand.hand_no, "source": "stock"}, seq=base + 10 * tbl.MAX_BUFFERED)
    assert t.receive(far, 2) == [] and t.flow.fault is None  # asked already at this length


def test_equivocation_seen_by_one_node_is_proven():
    """Two signed versions of one move reaching the same node: a provable equivocation."""
    net = Net(3, seed=17)
    bot = net.bots[CHEATER]
    net.bots[CHEATER] = lambda view, need: bot(view, need) if need != "discard" else None
    assert net.run(net.expects("discard", CHEATER))
    ct = net.tables[CHEATER]
    a, b = hand_of(ct, CHEATER)[:2]
    fa = net.craft(CHEATER, "discard", ct.turns.discard_body("discard", a))
    fb = net.craft(CHEATER, "discard", ct.turns.discard_body("discard", b))
    net.inject(CHEATER, fa)
    net.inject(CHEATER, fb)
    for t in net.honest():
        assert t.flow.fault is not None and t.flow.fault.rule == "equivocation" and t.flow.fault.seat == CHEATER
    r = audit_frames(net.tables[0].chain.frames)
    assert r.verdict == "accused" and r.seat == CHEATER and r.rule == "equivocation", r.summary()
    assert "confirmed" in r.detail, r.summary()


# ----------------------------------------------------------------------------- lying faults


def test_fault_whose_evidence_is_a_valid_move_blames_the_accuser(at_draw):
    net = at_draw
    t0 = net.tables[0]
    mover = t0.expected().seat
    liar = (mover + 1) % 3
    honest_move = net.craft(mover, "draw", {"hand": t0.hand.hand_no, "source": "stock"})
    fault = net.craft(liar, "fault", {"accused": mover, "rule": "not_your_turn", "reason": "lie",
                                      "evidence": [honest_move]})
    net.inject(liar, fault)
    victim = next(i for i in range(3) if i not in (liar,))
    r = audit_frames(net.tables[victim].chain.frames)
    assert r.verdict == "cheat" and r.seat == liar and r.rule == "false_accusation", r.summary()


@pytest.mark.parametrize("variant", ["identical", "other_signer"])
def test_fabricated_equivocation_evidence(at_draw, variant):
    net = at_draw
    t0 = net.tables[0]
    mover = t0.expected().seat
    liar = (mover + 1) % 3
    f1 = net.craft(mover, "draw", {"hand": t0.hand.hand_no, "source": "stock"})
    f2 = f1 if variant == "identical" else net.craft(liar, "draw", {"hand": t0.hand.hand_no, "source": "discard"})
    if variant == "other_signer":  # claim the liar's own frame is the mover's: re-label the seat
        e = wire.decode_envelope(f2)
        f2 = wire.Envelope(e.v, e.game, e.seq, mover, e.prev, e.kind, e.body, e.sig).encode()
    fault = net.craft(liar, "fault", {"accused": mover, "rule": "equivocation", "reason": "lie",
                                      "evidence": [f1, f2]})
    net.inject(liar, fault)
    for t in net.tables:
        if t.lobby.me != liar:
            assert t.flow.fault is not None and t.flow.fault.rule == "false_accusation" and t.flow.fault.seat == liar, t.flow.fault
    r = audit_frames(net.tables[mover].chain.frames)
    assert r.verdict == "cheat" and r.seat == liar and r.rule == "false_accusation", r.summary()


def test_leave_stops_the_table_naming_the_leaver():
    """Two seats: nobody is left to play on with (with three, the others remove the leaver and
    play on: tests/test_table_removal.py)."""
    net = Net(2, seed=2)
    assert net.run(net.expects("draw"))
    net.inject(1, net.craft(1, "leave", {"reason": "bye"}))
    t = net.tables[0]
    assert t.flow.fault is not None and t.flow.fault.seat == 1 and t.flow.fault.rule == "left"
    r = audit_frames(net.tables[0].chain.frames)
    assert r.verdict == "incomplete" and r.seat == 1 and r.rule == "left", r.summary()


# ----------------------------------------------------------------------------- secrecy


def test_published_shares_open_only_public_cards():
    """Replay a whole honest game as a passive listener: at every point, a slot for which every
    seat's decryption share has been published is a slot whose face is public (upcard,
    discards, shown hands); no stock card and no private card (including the closer's
    face-down card) can be opened from the chain before the hand's secrets."""
    net = Net(3, seed=18)
    assert net.run() and net.tables[0].flow.finished
    obs = tbl.Table.observer()
    checked = 0
    for frame in net.tables[0].chain.frames:
        obs.replay(frame)
        if obs.hand.hc is None or not obs.flow.hand_started or obs.hand.hc.secrets:
            continue
        seats = set(obs.hand.hc.seats)
        for slot, by_seat in obs.hand.shares.items():
            if set(by_seat) >= seats:
                assert obs.flow.game().faces.get(slot) is not None, f"slot {slot} openable but not public"
                checked += 1
        for seat in seats:  # nobody's private hand is known to the listener during play
            if obs.flow.phase == v.PLAYING:
                hidden = [s for s in obs.flow.game().hands.get(seat, []) if obs.flow.game().faces.get(s) is None]
                assert hidden, "a listener knows a whole hand during play"
        if obs.flow.phase == v.PLAYING:
            for s in obs.flow.game().stock:
                assert obs.flow.game().faces.get(s) is None and len(obs.hand.shares.get(s, {})) == 0
    assert checked > 0


def test_joiner_refuses_weak_shuffle_proofs():
    """A host cannot lower the cut-and-choose rounds under a joiner: below its minimum (40 by
    default) a shuffler could grind a forged proof; the offer is refused before sitting down,
    and the offer's k must be the k in the rules every seat signs (what the lobby shows)."""
    rules = make_rules("classic", {"limit": 30})
    ident = Identity.generate(SeededRng("weak-host"))
    host = tbl.Table.create(ident, SeededRng("h"), name="t", rules=rules, max_seats=2, addr="a:1", proof_rounds=10)
    assert host.lobby.rules is not None and host.lobby.rules.shuffle_proof_rounds == 10 and host.lobby.proof_rounds == 10
    with pytest.raises(tbl.ProtocolViolation) as exc:
        tbl.Table.joining(Identity.generate(SeededRng("j")), SeededRng("j"), host.chain.frames[0])
    assert exc.value.rule == "weak_proofs"
    ok = tbl.Table.joining(Identity.generate(SeededRng("j")), SeededRng("j"), host.chain.frames[0], min_proof_rounds=10)
    assert ok.lobby.proof_rounds == 10
    # an offer whose proof_rounds field disagrees with its signed rules is refused
    env = wire.decode_envelope(host.chain.frames[0])
    body = dict(env.body, proof_rounds=64)
    forged = wire.make_envelope(ident.private_key, game=env.game, seq=0, seat=0, prev=env.prev, kind="offer", body=body)
    with pytest.raises(tbl.ProtocolViolation) as exc:
        tbl.Table.joining(Identity.generate(SeededRng("j")), SeededRng("j"), forged.encode(), min_proof_rounds=1)
    assert exc.value.rule == "bad_rules"


# ------------------------------------------------------- a handler's errors are violations


def test_duplicate_card_drawn_is_a_violation_not_a_crash(monkeypatch):
    """A bad shuffle got through (as a forged proof would at tiny k: verification is switched
    off here): the dealer cloned the first player's first card over the stock top. The first
    player draws it: its private open finds one card at two slots. The node does not crash:
    it stops with a fault naming a seat, nothing of the draw is half-applied, and the other
    seats, who cannot see that private card, stop too without blaming the drawer."""
    monkeypatch.setattr(tbl.deck, "verify_shuffle", lambda *args, **kw: None)
    net = Net(3, seed=2, classes={CHEATER: stall("shuffle")})
    assert net.run(net.expects("shuffle", CHEATER))
    ct = net.tables[CHEATER]
    assert ct.hand.shuffle_order()[-1] == CHEATER  # the dealer shuffles last
    out, proof = deck.shuffle(ct.hand.ctx(CHEATER), crypto_of(ct).joint, ct.hand.cts, SeededRng("s"), k=ct.lobby.proof_rounds)
    first = game_of(ct).next_active(game_of(ct).dealer)
    up = game_of(ct).upcard_slot()
    out = list(out)
    out[up + 1] = out[game_of(ct).deal_plan()[first][0]]
    for i in range(3):  # the first player draws from the stock, whatever its bot thinks
        def stock_first(view: v.SeatView, need: str, bot: Callable[[Any, Any], Any] = net.bots[i]) -> Any:
            return v.Draw("stock") if need == "draw" else bot(view, need)
        net.bots[i] = stock_first
    frame = net.craft(CHEATER, "shuffle", shuffle_body(net, CHEATER, out, proof))
    net.inject(CHEATER, frame)
    net.handle(CHEATER, ct.receive(frame, CHEATER))  # the modified client goes on playing
    net.run()
    drawer = net.tables[first]
    assert drawer.flow.fault is not None and drawer.flow.fault.rule == "duplicate_card", drawer.flow.fault
    assert drawer.flow.fault.seat is not None and drawer.flow.fault.seat != first
    assert drawer.chain.envelopes[-1].kind == "fault"
    assert game_of(net.tables[first]).faces.get(up + 1) is None  # nothing learned from the bad open
    for t in net.tables:
        if t.lobby.me not in (first, CHEATER):
            assert t.flow.fault is not None and (t.flow.fault.seat != first or t.flow.fault.rule != "false_accusation"), t.flow.fault


@pytest.mark.parametrize("where", ["discard", "draw_share", "show", "deal_shares"])
def test_engine_and_deck_errors_in_any_handler_become_violations(monkeypatch, where):
    """An error raised by the engine or the deck inside any
    handler's checks (here forced) is the signer's protocol violation; no exception escapes
    ``receive`` and the envelope does not enter the chain."""
    net = Net(3, seed=4)
    victim = 0
    orig = net.tables[victim].checks[where]  # on_<where> of the part that checks the kind
    calls = {"n": 0}

    def boom(env):
        if env.seat != victim:
            calls["n"] += 1
            raise tbl.engine.GameError("J♦ is already at slot 21")
        return orig(env)

    monkeypatch.setitem(net.tables[victim].checks, where, boom)
    net.run()
    t = net.tables[victim]
    assert calls["n"] == 1
    assert t.flow.fault is not None and t.flow.fault.seat not in (None, victim) and t.flow.fault.rule == "bad_card", t.flow.fault
    last = t.chain.envelopes[-1]
    assert last.kind == "fault" and last.body["accused"] == t.flow.fault.seat
    rejected = wire.decode_envelope(last.body["evidence"][0])
    assert rejected.kind == where and rejected.seat == t.flow.fault.seat
    assert t.chain.frames[rejected.seq] != last.body["evidence"][0]  # it never entered the chain


def test_malformed_body_that_passes_the_schema_is_a_violation():
    """A body the wire schema accepts but a handler cannot use (a draw share for a slot far
    outside the deck) is the signer's violation, never a crash."""
    net = Net(3, seed=9, classes={CHEATER: stall("draw_share")})
    assert net.run(net.expects("draw_share", CHEATER))
    ct = net.tables[CHEATER]
    slot = ct.turns.pending_draw_slot
    assert slot is not None
    share = ct.hand.my_share(slot)
    net.inject(CHEATER, net.craft(CHEATER, "draw_share", {"hand": ct.hand.hand_no, "slot": 4000, "share": share}))
    assert_caught(net, {"share"})


class _DeferredJobs(Net):
    """Jobs wait in a list until :meth:`run_jobs` (a slow verifier)."""

    def __init__(self, *a, **kw):
        self.jobs: list[tuple[int, tbl.Job]] = []
        super().__init__(*a, **kw)

    def handle(self, i, outs):
        for o in outs:
            if isinstance(o, tbl.Job) and o.kind == "verify_shuffle":
                self.jobs.append((i, o))
        super().handle(i, [o for o in outs if not (isinstance(o, tbl.Job) and o.kind == "verify_shuffle")])

    def run_jobs(self):
        while self.jobs:
            i, job = self.jobs.pop(0)
            self.handle(i, self.tables[i].job_done(job.id, tbl.run_job(job)))


def _bad_proof_shuffle(net):
    ct = net.tables[CHEATER]
    out, proof = deck.shuffle(ct.hand.ctx(CHEATER), ct.hand.hc.joint, ct.hand.cts, SeededRng("s"), k=ct.lobby.proof_rounds)
    bad = bytearray(proof)
    bad[-1] ^= 1
    return net.craft(CHEATER, "shuffle", shuffle_body(net, CHEATER, out, bytes(bad)))


def test_shares_wait_for_verification_and_say_so():
    """In one process: after the last shuffle every seat owes its deal shares, but
    none is sent while a proof is unverified; the table says why (``waiting``, the view's
    progress) and its timer does not blame anyone meanwhile."""
    net = _DeferredJobs(3, seed=2, defer=True)
    assert net.run(lambda n: all(t.hand.hc is not None and t.flow.hand_started for t in n.tables) and bool(n.jobs))
    for t in net.tables:
        assert t.hand.verifying and not any(e.kind == "deal_shares" for e in t.chain.envelopes)
        progress = t.view().progress
        assert progress is not None and progress[2] == tbl.VERIFYING
        assert t.timeout() == [] and t.flow.fault is None
    assert any(t.waiting() == tbl.VERIFYING for t in net.tables)
    net.run_jobs()
    assert net.run(net.expects("draw"))
    assert all(not t.hand.verifying for t in net.tables)


def test_bad_shuffle_then_leave_is_shown_as_the_cheat():
    """A stop (here a leave) that arrives while a proof is being checked is shown only
    after the check; a failed proof is what every honest seat shows. (Two seats: with three, a
    leave no longer stops the table; the others remove the seat: test_table_removal.py.)"""
    net = _DeferredJobs(2, seed=7, classes={CHEATER: stall("shuffle")}, defer=True)
    assert net.run(net.expects("shuffle", CHEATER))
    net.inject(CHEATER, _bad_proof_shuffle(net))
    net.run(lambda n: not n.q)
    ref = net.tables[0]
    net.inject(CHEATER, net.craft(CHEATER, "leave", {"reason": "bye"}))
    for t in net.honest():
        assert t.flow.fault is None and t.expected() is None  # held: not shown as "left" yet
    net.run_jobs()
    for t in net.honest():
        assert t.flow.fault is not None and t.flow.fault.seat == CHEATER and t.flow.fault.rule == "shuffle", t.flow.fault
    r = audit_frames(ref.chain.frames)
    assert r.seat == CHEATER and r.rule == "shuffle", r.summary()


@pytest.mark.parametrize("accused", ["expected", "innocent"])
def test_timeout_claims_are_checked_against_the_chain(at_draw, accused):
    """A ``timeout`` against a seat that was not the expected speaker is the signer's
    false accusation (live and in audit, on every honest transcript alike); one against the
    expected speaker is consistent with the chain and shown as the accused's."""
    net = at_draw
    t0 = net.tables[0]
    mover = t0.expected().seat
    liar = (mover + 1) % 3
    innocent = (mover + 2) % 3
    target = mover if accused == "expected" else innocent
    fault = net.craft(liar, "fault", {"accused": target, "rule": "timeout", "reason": "too slow", "evidence": []})
    net.inject(liar, fault)
    verdicts = set()
    for t in net.tables:
        if t.lobby.me == liar:
            continue
        if accused == "innocent":
            assert t.flow.fault.seat == liar and t.flow.fault.rule == "false_accusation", t.flow.fault
        else:
            assert t.flow.fault.seat == mover and t.flow.fault.rule == "timeout", t.flow.fault
        r = audit_frames(t.chain.frames)
        verdicts.add((r.verdict, r.seat, r.rule))
    assert len(verdicts) == 1, verdicts
    [(verdict, seat, rule)] = verdicts
    if accused == "innocent":
        assert (verdict, seat, rule) == ("cheat", liar, "false_accusation")
    else:
        assert (verdict, seat, rule) == ("accused", mover, "timeout")


def test_unverifiable_accusation_names_the_accuser(at_draw):
    """An accusation nothing can check is shown as "A accuses B (unverifiable)", with
    the accuser as the subject."""
    net = at_draw
    mover = net.tables[0].expected().seat
    liar = (mover + 1) % 3
    net.inject(liar, net.craft(liar, "fault", {"accused": mover, "rule": "share", "reason": "bad", "evidence": []}))
    for t in net.tables:
        if t.lobby.me != liar:
            assert t.flow.fault.seat == liar and "unverifiable" in t.flow.fault.reason, t.flow.fault


def test_early_buffer_is_bounded_in_bytes(at_draw):
    """Large early envelopes are refused by size long before the count bound (not
    kept, accusing nobody)."""
    net = at_draw
    t = net.tables[0]
    base = len(t.chain.envelopes)
    big = {"hand": t.hand.hand_no, "round": 0, "deck": bytes(32) * 50, "proof": bytes(700_000)}
    for i in range(tbl.MAX_BUFFERED_BYTES // 700_000 + 8):
        t.receive(net.craft(2, "shuffle", big, seq=base + 1 + i, prev=bytes(32)), 2)
    assert t.flow.fault is None
    assert len(t.chain.buffer) <= tbl.MAX_BUFFERED_BYTES // 700_000 + 1
    assert sum(len(f) for x in t.chain.buffer.values() for f in x.values()) <= tbl.MAX_BUFFERED_BYTES


def test_fault_with_evidence_in_the_lobby_is_judged_without_copying_the_table():
    """A fault's evidence is judged in place, changing nothing: a deep copy of the table fails
    on a live table whose rng is the ``secrets`` module ("cannot pickle 'module' object") and
    would kill a host in the lobby."""
    import secrets

    ids = [Identity.generate(SeededRng(f"lobby-id/{i}")) for i in range(3)]
    rules = make_rules("classic", {"limit": 30})
    host = tbl.Table.create(ids[0], secrets, name="t", rules=rules, max_seats=3, addr="127.0.0.1:9000",
                            proof_rounds=2)
    for i in (1, 2):
        host.lobby.seat_host(f"P{i}", ids[i].public_bytes, f"127.0.0.1:{9000 + i}")
    host.start()
    n, head = len(host.chain.envelopes), host.chain.head

    def craft(seat, kind, body):
        return wire.make_envelope(ids[seat].private_key, game=host.lobby.game, seq=n, seat=seat, prev=head,
                                  kind=kind, body=body).encode()

    out_of_turn = craft(2, "agree", {"rules_hash": bytes(32), "seating_hash": bytes(32), "toss_commit": bytes(32)})
    outs = host.receive(craft(1, "fault", {"accused": 2, "rule": "not_your_turn", "reason": "x",
                                           "evidence": [out_of_turn]}), 1)
    assert host.flow.fault is not None and host.flow.fault.seat == 2 and host.flow.fault.rule == "not_your_turn", host.flow.fault
    assert any(isinstance(o, tbl.Stopped) for o in outs)
    assert len(host.chain.envelopes) == n + 1  # the fault, nothing of the trial


def test_a_deck_the_wire_cannot_carry_is_refused_before_anything_is_signed(monkeypatch):
    """A deck with more cards than a ``shuffle`` envelope carries is refused by the host with
    one sentence, instead of its first shuffle failing inside the node; joiners refuse such an
    offer. The cap is the largest deck the rules build (108 cards), so only a lower cap (as
    before it was lifted from 80) shows the refusal."""
    from p2p_chinchon import wire
    from p2p_chinchon.engine import make_rules
    from p2p_chinchon.identity import Identity
    from p2p_chinchon.table.lobby import deck_too_big

    big = make_rules("classic", {"deck": 48, "decks": 2})
    assert deck_too_big(big, 4) is None  # two packs of 48: 96 cards, carried
    monkeypatch.setattr(wire, "MAX_CARDS", 80)
    with pytest.raises(tbl.IntentError, match="96 cards for 4 players: the protocol carries at most 80"):
        tbl.Table.create(Identity.generate(), SeededRng("h"), name="t", rules=big, max_seats=4, addr="127.0.0.1:1")
    assert deck_too_big(make_rules("classic", {}), 8) is None  # two 40-card packs: 80 fit
    assert deck_too_big(big, 2) is not None
