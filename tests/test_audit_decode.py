"""The audit decodes each envelope once (not again in ``Table.replay`` nor in the
table's frame acceptance), and an envelope handed
over already decoded is judged exactly as its frame would be."""

from __future__ import annotations

import dataclasses

import pytest

from harness.seeded import seeded_net
from p2p_chinchon import table as tbl, transcript, wire
from p2p_chinchon.audit import audit_file, audit_frames


@pytest.fixture
def game() -> list[bytes]:
    net = seeded_net("game_end", 2, seed=3)
    assert net.tables[0].flow.finished
    return list(net.tables[0].chain.frames)


@pytest.fixture
def decodes(monkeypatch) -> list[int]:
    """Counts every call of ``wire.decode_envelope``, by module attribute and by the name the
    transcript loader imported."""
    calls = [0]
    real = wire.decode_envelope

    def counted(data):
        calls[0] += 1
        return real(data)

    monkeypatch.setattr(wire, "decode_envelope", counted)
    monkeypatch.setattr(transcript, "decode_envelope", counted)
    return calls


def test_audit_frames_decodes_each_frame_once(game, decodes):
    r = audit_frames(game)
    assert r.verdict == "ok", r.summary()
    assert decodes[0] == len(game)


def test_audit_file_decodes_each_frame_once_with_the_load(game, decodes, tmp_path):
    path = tmp_path / "game.chn"
    path.write_bytes(b"".join(game))
    r = audit_file(path)
    assert r.verdict == "ok", r.summary()
    assert decodes[0] == len(game)  # the load decodes; the replay takes its envelopes


def test_a_torn_or_damaged_file_is_still_judged_at_the_right_envelope(game, tmp_path):
    bad = bytearray(game[5])
    bad[-3] ^= 0x01  # inside the signature: decodes, does not verify
    path = tmp_path / "damaged.chn"
    path.write_bytes(b"".join(game[:5]) + bytes(bad) + b"".join(game[6:]))
    r = audit_file(path)
    assert (r.verdict, r.index, r.rule) == ("corrupt", 5, "bad_signature"), r.summary()
    path.write_bytes(b"".join(game[:5]) + b"\xc1" + b"".join(game[5:]))  # unparseable byte
    r = audit_file(path)
    assert r.verdict == "corrupt" and r.index == 5, r.summary()


@pytest.mark.parametrize("inserted", [b"\xc6\xff\xff\xff\xff", b"\xc5\xff\xff"])
def test_a_header_inserted_before_the_last_frames_is_damage_not_a_torn_tail(game, tmp_path, inserted):
    """Five bytes claiming a 4 GiB bin before the last frames are not "a torn frame (a crash while
    writing)", exit 3, which would hide whatever those frames held. A header claiming more than
    a frame may be, or a tail that cannot start an envelope, is damage: exit 1."""
    cut = len(game) - 8
    path = tmp_path / "inserted.chn"
    path.write_bytes(b"".join(game[:cut]) + inserted + b"".join(game[cut:]))
    r = audit_file(path)
    assert (r.verdict, r.index, r.exit_code) == ("corrupt", cut, 1), r.summary()
    assert "torn" not in r.detail


PREFIX = 60  # the mutations are judged on the first hand (an audit of a whole game takes seconds)


def _mutations(game: list[bytes]) -> dict[str, list[wire.Envelope]]:
    envs = [wire.decode_envelope(f) for f in game[:PREFIX]]
    i = PREFIX // 2
    forged = dataclasses.replace(envs[i], sig=envs[i].sig[::-1])  # the signature no longer verifies
    return {
        "honest": envs,
        "bad_signature": envs[:i] + [forged] + envs[i + 1:],
        "swapped": envs[:i] + [envs[i + 1], envs[i]] + envs[i + 2:],
        "dropped": envs[:i] + envs[i + 1:],
        "duplicated": envs[:i + 1] + envs[i:],
    }


@pytest.mark.parametrize("case", ["honest", "bad_signature", "swapped", "dropped", "duplicated"])
def test_decoded_envelopes_get_the_verdict_of_their_frames(game, case):
    envs = _mutations(game)[case]
    by_frame = audit_frames([e.encode() for e in envs])
    by_env = audit_frames(envs)
    assert by_env.to_json() == by_frame.to_json()
    if case == "honest":
        assert by_env.verdict == "incomplete", by_env.summary()
    else:
        at = PREFIX // 2 + (case == "duplicated")  # a copy is refused where it stands
        assert by_env.verdict == "corrupt" and by_env.index == at, by_env.summary()


def test_table_replay_takes_a_frame_or_its_envelope_alike(game):
    by_frame, by_env = tbl.Table.observer(), tbl.Table.observer()
    for frame in game[:PREFIX]:
        by_frame.replay(frame)
        by_env.replay(wire.decode_envelope(frame))
        assert by_env.chain.head == by_frame.chain.head
    for frame in (game[PREFIX - 1], game[PREFIX + 1]):  # out of place: refused alike
        with pytest.raises(tbl.ProtocolViolation) as exc:
            by_env.replay(wire.decode_envelope(frame))
        assert exc.value.rule == "seq"
    by_env.replay(wire.decode_envelope(game[PREFIX]))
    assert by_env.chain.head == wire.decode_envelope(game[PREFIX]).hash()


def test_the_report_carries_the_offers_proof_rounds_under_every_proof_system(game):
    """``audit --json`` carries the offer's ``proof_rounds`` for Terelius-Wikström games too."""
    r = audit_frames(game)
    offer = wire.decode_envelope(game[0])
    assert r.proof_system == "terelius-wikstrom" and r.proof_rounds == offer.body["proof_rounds"] == 2
    assert r.to_json()["proof_rounds"] == 2
    assert "k = " not in r.summary() and "shuffle proofs terelius-wikstrom" in r.summary()
