"""The table's shuffle proof system comes from the rules (``shuffle_proof``): every seat makes
and checks proofs of that system, and a proof of the other system is refused and blamed."""

from __future__ import annotations

import pytest

from harness import CHEATER, Net, crypto_of, rules_of, shuffle_body, stall
from p2p_chinchon import deck
from p2p_chinchon.audit import audit_frames
from p2p_chinchon.engine import make_rules
from p2p_chinchon.rng import SeededRng

OTHER = {"terelius-wikstrom": "cut-and-choose", "cut-and-choose": "terelius-wikstrom"}


@pytest.mark.parametrize("system", sorted(OTHER))
def test_a_shuffle_proved_with_the_other_system_is_refused(system):
    rules = make_rules("classic", {"limit": 30, "shuffle_proof": system})
    net = Net(3, seed=8, rules=rules, classes={CHEATER: stall("shuffle")})
    assert net.run(net.expects("shuffle", CHEATER))
    assert all(rules_of(t).shuffle_proof == system for t in net.tables)
    ct = net.tables[CHEATER]
    wrong = deck.proof_system(OTHER[system], ct.lobby.proof_rounds)
    out, proof = deck.shuffle(ct.hand.ctx(CHEATER), crypto_of(ct).joint, ct.hand.cts, SeededRng("s"),
                              k=ct.lobby.proof_rounds, system=wrong)
    net.inject(CHEATER, net.craft(CHEATER, "shuffle", shuffle_body(net, CHEATER, out, proof)))
    for t in net.honest():
        assert t.flow.fault is not None and (t.flow.fault.seat, t.flow.fault.rule) == (CHEATER, "shuffle")
    r = audit_frames(net.tables[0].chain.frames)
    assert r.verdict == "accused" and r.seat == CHEATER, r.summary()
    assert r.proof_system == system and r.proof_rounds == ct.lobby.proof_rounds > 0  # the offer's, under either system


def test_a_cut_and_choose_table_plays_its_hands_with_cut_and_choose_proofs():
    rules = make_rules("classic", {"limit": 30, "shuffle_proof": "cut-and-choose"})
    net = Net(2, seed=9, rules=rules)
    assert net.run()
    t = net.tables[0]
    cc = deck.CutAndChoose(t.lobby.proof_rounds)
    shuffles = [e for e in t.chain.envelopes if e.kind == "shuffle"]
    assert shuffles and all(
        len(e.body["proof"]) == deck.proof_length(e.body["proof"], len(e.body["deck"]) // 64,
                                                  system=cc) for e in shuffles)
    r = audit_frames(t.chain.frames)
    assert r.verdict == "ok" and (r.proof_system, r.proof_rounds) == ("cut-and-choose", t.lobby.proof_rounds)
    assert f"k = {t.lobby.proof_rounds}" in r.summary()
