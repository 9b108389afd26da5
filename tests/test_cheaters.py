"""Cheating peers on loopback: every honest node catches the cheat, names the seat, stops the
table with a signed fault carrying the evidence, and `audit` of an honest node's transcript
confirms it. The cheater (seat 1) runs a real Table whose outgoing messages are corrupted at
the last moment, after its own checks, as a modified client would."""

from __future__ import annotations

import io

import msgpack
import pytest

from p2p_chinchon import deck, table as tbl, view as v, wire
from p2p_chinchon.audit import audit_file
from p2p_chinchon.engine import make_rules
from p2p_chinchon.local import SeatSpec, play_local
from p2p_chinchon.net.node import Timeouts
from p2p_chinchon.transcript import load_transcript

CHEATER = 1


class CheatTable(tbl.Table):
    cheat: str = ""
    done = False
    stalled = False
    tamper_next = False

    def _emit_own(self, kind, body):
        if self.tamper_next:  # a modified client: skip our own checks, sign, send, stall
            self.tamper_next = False
            self.stalled = True
            self._emit_raw(kind, body)
            return
        super()._emit_own(kind, body)

    def _advance(self):
        if not self.stalled:
            super()._advance()

    def _emit_raw(self, kind: str, body: dict, seq: int | None = None) -> bytes:
        assert self.lobby.identity is not None and self.lobby.me is not None  # a seated player
        env = wire.make_envelope(
            self.lobby.identity.private_key, game=self.lobby.game, seq=len(self.chain.envelopes) if seq is None else seq,
            seat=self.lobby.me, prev=self.chain.head, kind=kind, body=body,
        )
        frame = env.encode()
        self.out.add(tbl.Send(frame))
        return frame

    def receive(self, frame, link_seat=None):
        outs = super().receive(frame, link_seat)
        step = self.expected()
        if (
            self.cheat == "out_of_turn" and not self.done and self.flow.hand_started
            and step is not None and step.kind == "draw" and step.seat != self.lobby.me
        ):
            self.done = True
            self.out.items = []
            self._emit_raw("draw", {"hand": self.hand.hand_no, "source": "stock"})
            outs += self.out.take()
        if self.cheat == "bad_signature" and not self.done and self.flow.hand_started:
            self.done = True
            assert self.lobby.identity is not None and self.lobby.me is not None
            env = wire.make_envelope(
                self.lobby.identity.private_key, game=self.lobby.game, seq=len(self.chain.envelopes), seat=self.lobby.me,
                prev=self.chain.head, kind="leave", body={"reason": "x"},
            )
            forged = wire.Envelope(env.v, env.game, env.seq, env.seat, env.prev, env.kind,
                                   {"reason": "forged"}, env.sig)
            outs.append(tbl.Send(forged.encode()))
        return outs

    def intent(self, intent):
        if isinstance(intent, (v.Discard, v.Close)) and not self.done:
            e = self.flow.game()
            assert self.lobby.me is not None
            hand = e.hands[self.lobby.me]
            if self.cheat == "discard_not_held":
                self.done = True
                slot = e.stock[-1]  # a stock card we never drew
                self.out.items = []
                self._emit_raw("discard", {"hand": self.hand.hand_no, "slot": slot, "share": self.hand.my_share(slot)})
                return self.out.take()
            if self.cheat == "bad_close":
                self.done = True
                self.out.items = []
                self._emit_raw("close", self.turns.discard_body("close", hand[0]))
                return self.out.take()
            if self.cheat == "equivocation":
                self.done = True
                self.out.items = []
                seq = len(self.chain.envelopes)
                self._emit_raw("discard", self.turns.discard_body("discard", hand[0]), seq)
                self._emit_raw("discard", self.turns.discard_body("discard", hand[1]), seq)
                return self.out.take()
        return super().intent(intent)

    def _auto_body(self, step):
        if self.stalled:
            return None
        body = super()._auto_body(step)
        if body is None or self.done:
            return body
        if self.cheat == "withhold" and step.kind == "draw_share":
            self.done = True
            return None  # never send the reveal token
        if self.cheat == "bad_proof" and step.kind == "shuffle":
            self.done = True
            proof = bytearray(body["proof"])
            proof[-1] ^= 1
            body["proof"] = bytes(proof)
            self.tamper_next = True
        if (self.cheat in ("steal_hand", "peek_upcard") and step.kind == "shuffle" and self.hand.crypto().round == 0
                and len(self.flow.queue) > 1 and self.flow.queue[1].kind == "deal_shares"):
            # the dealer shuffles last: put the victim's dealt ciphertexts in our own dealt
            # slots (or the stock top in the upcard slot), keep the proof of the real shuffle
            self.done = True
            cts = deck.decode_deck(body["deck"], len(self.hand.cts))
            plan = self.flow.game().deal_plan()
            assert self.lobby.me is not None
            if self.cheat == "steal_hand":
                victim = next(s for s in plan if s != self.lobby.me)
                for mine, theirs in zip(plan[self.lobby.me], plan[victim], strict=True):
                    cts[mine] = cts[theirs]
            else:
                up = self.flow.game().upcard_slot()
                cts[up] = cts[up + 1]
            body["deck"] = deck.encode_deck(cts)
            self.tamper_next = True
        if self.cheat == "bad_share" and step.kind == "deal_shares":
            self.done = True
            shares = list(body["shares"])
            s = bytearray(shares[0])
            s[0] ^= 4
            shares[0] = bytes(s)
            body["shares"] = shares
            self.tamper_next = True
        return body


CASES = {
    # cheat: accepted rule ids (the race between the cheat and the honest speaker decides
    # whether an out-of-turn move is seen before or after the legitimate one)
    "out_of_turn": {"not_your_turn", "fork", "seq"},
    "discard_not_held": {"not_in_hand"},
    "bad_close": {"first_round_close", "close_points", "cannot_close", "close"},
    "withhold": {"timeout"},
    "bad_proof": {"shuffle"},
    "bad_share": {"share"},
    "equivocation": {"equivocation"},
}


@pytest.mark.parametrize("cheat", sorted(CASES))
async def test_cheater_is_caught_and_named(tmp_path, cheat):
    cls = type(f"Cheat_{cheat}", (CheatTable,), {"cheat": cheat})
    rules = make_rules("classic", {"limit": 30})
    specs = [SeatSpec("Honest0"), SeatSpec("Cheater", table_cls=cls), SeatSpec("Honest2")]
    timeouts = Timeouts(protocol=2.0, decision=2.0)
    results = await play_local(rules, specs, seed=31, proof_rounds=4, transcript_dir=tmp_path, timeouts=timeouts)
    honest = [r for r in results if r.seat != CHEATER]
    assert len(honest) == 2
    for r in honest:
        assert r.fault is not None, f"seat {r.seat} did not notice {cheat}"
        assert r.fault.seat == CHEATER, r.fault
        assert r.fault.rule in CASES[cheat], r.fault
        assert r.winner is None
    # The honest transcripts end with a signed fault; audit names the cheater.
    for seat in (0, 2):
        path = tmp_path / f"seat{seat}.chn"
        loaded = load_transcript(path)
        assert loaded.ok
        last = loaded.envelopes[-1]
        assert last.kind == "fault" and last.body["accused"] == CHEATER
        if cheat != "withhold":
            assert last.body["evidence"], "the offending frame is kept as evidence"
        report = audit_file(path)
        assert report.exit_code == 1
        assert report.seat == CHEATER, report.summary()
        if cheat == "bad_proof":
            # peers' proofs are verified off the critical path (deferred), so the bad shuffle
            # is in the chain and the replay pins it at its own index
            assert report.verdict == "cheat" and report.rule == "shuffle", report.summary()
        else:
            assert report.verdict == "accused", report.summary()
        if cheat not in ("withhold", "bad_signature", "bad_proof"):
            assert "confirm" in report.detail, report.summary()


async def test_badly_signed_frame_is_dropped_not_blamed(tmp_path):
    """A frame that does not verify under the seat it names could come from anyone on the
    network path (links are not MACed): every honest node drops it, keeps it as evidence, names
    the claimed seat in that record, and the game goes on to the end."""
    cls = type("Cheat_bad_signature", (CheatTable,), {"cheat": "bad_signature"})
    rules = make_rules("classic", {"limit": 20})
    specs = [SeatSpec("Honest0"), SeatSpec("Forger", table_cls=cls), SeatSpec("Honest2")]
    results = await play_local(rules, specs, seed=31, proof_rounds=4, transcript_dir=tmp_path,
                               timeouts=Timeouts(protocol=5.0, decision=5.0))
    for r in results:
        assert r.fault is None and r.winner is not None
    for r in results:
        if r.seat != CHEATER:
            assert (CHEATER, "bad_signature") in r.dropped
            evidence = (tmp_path / f"seat{r.seat}.chn.evidence").read_bytes()
            records = list(msgpack.Unpacker(io.BytesIO(evidence), raw=False))
            assert records[0]["rule"] == "bad_signature" and records[0]["seat"] == CHEATER
            assert audit_file(tmp_path / f"seat{r.seat}.chn").verdict == "ok"


class SplitViewTable(CheatTable):
    """Signs two different discards for one position and sends each to a different peer."""

    cheat = "split_view"
    split: list = []

    def intent(self, intent):
        if isinstance(intent, v.Discard) and not self.done:
            self.done = True
            self.stalled = True
            assert self.lobby.me is not None
            hand = self.flow.game().hands[self.lobby.me]
            seq = len(self.chain.envelopes)
            a = self._emit_raw("discard", self.turns.discard_body("discard", hand[0]), seq)
            b = self._emit_raw("discard", self.turns.discard_body("discard", hand[1]), seq)
            self.split[:] = [a, b]
            return self.out.take()
        return super().intent(intent)


async def test_split_view_equivocation_is_found_by_resync(tmp_path):
    """The cheater shows one discard to seat 0 and another to seat 2. Neither honest node holds
    both at first; the next envelope reveals that their histories diverged, the node asks the
    sender for its envelopes (Resync), finds the second version, and proves the equivocation.
    Nobody honest is blamed."""
    SplitViewTable.split = []

    def node_ready(node):
        run = node.run

        async def run_with_split_mesh(mesh):
            broadcast = mesh.broadcast

            async def split_broadcast(payload):
                frames = SplitViewTable.split
                if frames and payload[1:] in frames:
                    target = 0 if payload[1:] == frames[0] else 2
                    await mesh.send(target, payload)
                    return frozenset({target})
                return await broadcast(payload)

            mesh.broadcast = split_broadcast
            return await run(mesh)

        node.run = run_with_split_mesh

    rules = make_rules("classic", {"limit": 30})
    specs = [SeatSpec("Honest0"), SeatSpec("Cheater", table_cls=SplitViewTable, node_ready=node_ready),
             SeatSpec("Honest2")]
    results = await play_local(rules, specs, seed=33, proof_rounds=4, transcript_dir=tmp_path,
                               timeouts=Timeouts(protocol=5.0, decision=5.0))
    for r in results:
        if r.seat != CHEATER:
            assert r.fault is not None and r.fault.seat == CHEATER and r.fault.rule == "equivocation", r.fault
    for seat in (0, 2):
        report = audit_file(tmp_path / f"seat{seat}.chn")
        assert report.seat == CHEATER and report.rule == "equivocation", report.summary()


@pytest.mark.parametrize("cheat", ["steal_hand", "peek_upcard"])
async def test_no_share_leaves_before_every_shuffle_proof_passed(tmp_path, cheat):
    """The dealer shuffles last and copies the victim's dealt ciphertexts into
    its own dealt slots (or the stock top into the upcard slot) under the proof of its real
    shuffle. Proofs are verified off the critical path (the default for host and join), yet no
    honest seat releases a decryption share of that deck before its verification: the bad
    proof stops the table first, naming the dealer, and nothing was opened."""
    cls = type(f"Cheat_{cheat}", (CheatTable,), {"cheat": cheat})
    rules = make_rules("classic", {"limit": 30})
    specs = [SeatSpec("Honest0"), SeatSpec("Cheater", table_cls=cls), SeatSpec("Honest2")]
    results = await play_local(rules, specs, seed=31, proof_rounds=4, transcript_dir=tmp_path,
                               timeouts=Timeouts(protocol=5.0, decision=5.0))
    assert len(results) == 3  # no node crashed
    prefixes, reports = [], []
    for seat in (0, 2):
        r = results[seat]
        assert r.fault is not None and r.fault.seat == CHEATER and r.fault.rule == "shuffle", r.fault
        envs = load_transcript(tmp_path / f"seat{seat}.chn").envelopes
        first_fault = next(i for i, e in enumerate(envs) if e.kind == "fault")
        bad = wire.decode_envelope(envs[first_fault].body["evidence"][0])
        assert bad.kind == "shuffle" and bad.seat == CHEATER
        released = [e for e in envs[bad.seq:] if e.seat != CHEATER and e.kind in ("deal_shares", "draw_share",
                                                                                   "discard", "close", "show", "secret")]
        assert released == [], f"seat {seat}'s chain holds shares of the bad deck: {released}"
        prefixes.append([e.encode() for e in envs[:first_fault]])
        reports.append(audit_file(tmp_path / f"seat{seat}.chn"))
    assert prefixes[0] == prefixes[1], "honest transcripts agree up to the fault"
    for report in reports:
        assert report.exit_code == 1 and report.seat == CHEATER and report.rule == "shuffle", report.summary()
