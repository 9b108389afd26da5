"""A table survives its players: separate processes on loopback, or in network
namespaces, killed with SIGKILL and restarted with the same command; lobby leaving; read-only and
full transcript folders; joiners started before their host; presence and the turn clock.

No timed assertions: the waits below are generous upper bounds for a loaded 2-core machine,
never measurements.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness import free_port
from harness.procs import FAST, FIRST_HAND_GOES_ON, JOIN_FAST, SHORT_LINGER, Lab, kinds, wait_until
from p2p_chinchon.audit import audit_file
from p2p_chinchon.transcript import load_transcript

RULES = ["--option", "limit=30"]


@pytest.fixture
def lab(tmp_path):
    lab = Lab(tmp_path)
    yield lab
    lab.close()


def three_seats(lab: Lab, port: int, extra_rules: Sequence[str] = ()) -> tuple[list[str], list[str], list[str]]:
    host = ["host", "--bot", "--no-mdns", "--port", str(port), "--bind", "127.0.0.1", "--seats", "3",
            "--transcript", "h.chn", *FAST, *RULES, *extra_rules]
    join = ["join", "--bot", "--connect", f"127.0.0.1:{port}", "--bind", "127.0.0.1", *JOIN_FAST]
    return host, join + ["--name", "Bruno", "--transcript", "b.chn"], join + ["--name", "Carla", "--transcript", "c.chn"]


def start_game(lab: Lab, extra_rules: list[str], timings: dict[str, float] | None = None,
               carla: dict[str, float] | None = None) -> list[subprocess.Popen]:
    """Host, then Bruno and Carla, on loopback; ``timings`` of the host and Bruno, ``carla`` hers."""
    h, b, c = three_seats(lab, free_port(), extra_rules)
    ph = lab.start("h", h, timings=timings)
    time.sleep(1.0)
    return [ph, lab.start("b", b, timings=timings), lab.start("c", c, timings=carla)]


def finish_all(procs: list[subprocess.Popen], limit: float = 400.0) -> list[int]:
    end = time.monotonic() + limit
    return [p.wait(timeout=max(1.0, end - time.monotonic())) for p in procs]


def assert_identical_and_ok(folder: Path, names=("h", "b", "c")) -> None:
    data = [(folder / f"{n}.chn").read_bytes() for n in names]
    assert all(d == data[0] for d in data), "every transcript is byte-identical"
    report = audit_file(folder / f"{names[0]}.chn")
    assert report.verdict == "ok", report.summary()
    for n in names:  # the game is over: no secrets are left on disk
        assert not (folder / f"{n}.chn.secrets").exists()


# ---------------------------------------------------------------- kill -9 and restart


def test_seat_down_after_the_game_ended_comes_back_to_its_result(lab):
    """A seat that went down after the game ended but before it removed its secrets (its last
    moments: lingering, or leaving) runs its same command again: it replays the finished game,
    prints the result, removes the secrets and exits 0 (not "a game that is over", exit 1)."""
    import threading

    port = free_port()
    h, b, c = three_seats(lab, port)
    procs = [lab.start("h", h)]
    time.sleep(1.0)
    procs += [lab.start("b", b), lab.start("c", c)]
    secrets, kept = lab.folder / "b.chn.secrets", lab.folder / "kept.secrets"
    done = threading.Event()

    def keep_copying() -> None:  # the last copy holds every hand's key, as at a kill in the end
        while not done.is_set():
            try:
                data = secrets.read_bytes()
            except OSError:
                data = b""
            if data:
                kept.write_bytes(data)
            time.sleep(0.02)

    copier = threading.Thread(target=keep_copying, daemon=True)
    copier.start()
    try:
        codes = finish_all(procs)
    finally:
        done.set()
        copier.join()
    assert codes == [0, 0, 0], f"exit codes {codes}\n" + lab.tails(("h", "b", "c"))
    assert not secrets.exists() and kept.exists()
    shutil.copy(kept, secrets)
    again = lab.start("b2", b)
    assert again.wait(timeout=120) == 0, lab.tails(("b2",))
    assert "winner:" in lab.log("b2") and not secrets.exists()
    assert_identical_and_ok(lab.folder)


@pytest.mark.parametrize("victim,point", [("c", "draw"), ("h", "shuffle"), ("b", "key_share"), ("b", "close")])
def test_killed_seat_restarts_with_the_same_command(lab, victim, point):
    """A seat killed with SIGKILL mid-hand (after a draw, during the shuffle, during the key
    set-up) runs the same command again: it replays its transcript with its saved secrets,
    catches up, and the game finishes with byte-identical transcripts that audit ok."""
    port = free_port()
    # at "draw" the others must see the seat away, so the game may not have ended before the kill
    cmds = dict(zip("hbc", three_seats(lab, port, FIRST_HAND_GOES_ON if point == "draw" else []), strict=True))
    procs = {"h": lab.start("h", cmds["h"])}
    time.sleep(1.0)
    procs["b"] = lab.start("b", cmds["b"])
    procs["c"] = lab.start("c", cmds["c"])
    path = lab.folder / f"{victim}.chn"
    wait_until(lambda: point in kinds(path), what=f"a {point} in {path.name}", lab=lab)
    secrets = lab.folder / f"{victim}.chn.secrets"
    assert secrets.exists() and secrets.stat().st_mode & 0o777 == 0o600
    procs[victim].send_signal(signal.SIGKILL)
    procs[victim].wait()
    time.sleep(1.0)
    procs[victim] = lab.start(f"{victim}2", cmds[victim])
    codes = finish_all(list(procs.values()))
    assert codes == [0, 0, 0], f"exit codes {codes}\n" + lab.tails(("h", "b", "c", f"{victim}2"))
    assert_identical_and_ok(lab.folder)
    others = [n for n in "hbc" if n != victim]
    name = {"h": "bot", "b": "Bruno", "c": "Carla"}[victim]
    if point == "draw":  # a decision was awaited: every other screen said who is away, and back
        for n in others:
            assert f"{name} disconnected: waiting for them" in lab.log(n)
            assert f"{name} is back" in lab.log(n)


def test_seat_asleep_mid_hand_wakes_and_the_game_finishes(lab):
    """A laptop that sleeps (SIGSTOP: its links stay open, it sends nothing) past the silence
    limit but within ``rejoin_wait``: the others say it is away and wait for it, it wakes
    (SIGCONT) and plays on; the game finishes with byte-identical transcripts that audit ok."""
    ph, pb, pc = start_game(lab, FIRST_HAND_GOES_ON)
    wait_until(lambda: "draw" in kinds(lab.folder / "b.chn"), what="a draw", lab=lab)
    pb.send_signal(signal.SIGSTOP)
    try:
        wait_until(lambda: "Bruno disconnected: waiting for them" in lab.log("h")
                   and "Bruno disconnected: waiting for them" in lab.log("c"), limit=120,
                   what="the others to see Bruno away", lab=lab)
    finally:
        pb.send_signal(signal.SIGCONT)
    codes = finish_all([ph, pb, pc])
    assert codes == [0, 0, 0], f"exit codes {codes}\n" + lab.tails(("h", "b", "c"))
    assert_identical_and_ok(lab.folder)
    for n in ("h", "c"):
        assert "Bruno is back" in lab.log(n), lab.tails((n,))
    assert "remove" not in kinds(lab.folder / "h.chn")


def test_seat_back_after_the_protocol_limit_but_inside_rejoin_wait_is_not_blamed(lab):
    """One clock per absent seat: Bruno's laptop sleeps (SIGSTOP) while the others
    wait for his shares, longer than the protocol limit (``--timeout`` 4 s) but less than
    ``rejoin_wait`` (20 s). Back at 9 s, whatever he owes gets a fresh limit from his return:
    nobody is blamed, the game finishes, transcripts byte-identical and ok. (Before, the
    others signed ``timeout`` against him within 0.2 s of his return.)"""
    h, b, c = three_seats(lab, free_port(), ["--option", "rejoin_wait=20", *FIRST_HAND_GOES_ON])
    ph = lab.start("h", h + ["--timeout", "4"])
    time.sleep(1.0)
    pb, pc = lab.start("b", b + ["--timeout", "4"]), lab.start("c", c + ["--timeout", "4"])
    wait_until(lambda: "draw" in kinds(lab.folder / "b.chn"), what="a draw", lab=lab)
    pb.send_signal(signal.SIGSTOP)
    try:
        time.sleep(9.0)
    finally:
        pb.send_signal(signal.SIGCONT)
    codes = finish_all([ph, pb, pc])
    assert codes == [0, 0, 0], f"exit codes {codes}\n" + lab.tails(("h", "b", "c"))
    assert_identical_and_ok(lab.folder)
    assert not {"fault", "remove"} & set(kinds(lab.folder / "h.chn"))
    assert "Bruno is back" in lab.log("h") + lab.log("c"), lab.tails(("h", "c"))


def test_seat_asleep_past_rejoin_wait_wakes_listens_and_hears_it_was_removed(lab):
    """Carla's laptop sleeps (SIGSTOP) past ``rejoin_wait``: the two others (a majority) vote
    her away, remove her and play on. She wakes: her clock jumped, so she signs nothing (no
    ``absent``, no ``timeout``: she cannot tell who was away), catches up, finds the signed
    removal and stops with one line, exit 4. Her record holds the removal (or, in its place, an
    envelope of her own she never got to send) and accuses nobody;
    the others finish, identical and ok. Bruno sleeps from the removal until she is told, so
    the game cannot end before she asks. (Told and gone, she is not lingered for: SHORT_LINGER.)"""
    cmds = dict(zip("hbc", three_seats(lab, free_port(), ["--option", "rejoin_wait=5", *FIRST_HAND_GOES_ON]), strict=True))
    procs = {"h": lab.start("h", cmds["h"], timings=SHORT_LINGER)}
    time.sleep(1.0)
    procs["b"], procs["c"] = lab.start("b", cmds["b"], timings=SHORT_LINGER), lab.start("c", cmds["c"])
    wait_until(lambda: "draw" in kinds(lab.folder / "c.chn"), what="a draw", lab=lab)
    procs["c"].send_signal(signal.SIGSTOP)
    try:
        wait_until(lambda: kinds(lab.folder / "h.chn").count("remove") == 2, what="the removal", lab=lab)
        procs["b"].send_signal(signal.SIGSTOP)
    finally:
        procs["c"].send_signal(signal.SIGCONT)
    try:
        assert procs["c"].wait(timeout=300) == 4, lab.tails(("c", "h"))
    finally:
        procs["b"].send_signal(signal.SIGCONT)
    assert "you were removed from the game (absent since hand" in lab.log("c"), lab.tails(("c",))
    envs = load_transcript(lab.folder / "c.chn").envelopes
    assert not [e for e in envs if e.kind == "fault"], "the waking seat accuses nobody"
    report = audit_file(lab.folder / "c.chn")
    assert report.verdict == "incomplete", report.summary()
    codes = finish_all([procs["h"], procs["b"]])
    assert codes == [0, 0], f"exit codes {codes}\n" + lab.tails(("h", "b"))
    host = (lab.folder / "h.chn").read_bytes()
    assert host == (lab.folder / "b.chn").read_bytes()
    assert audit_file(lab.folder / "h.chn").verdict == "ok"
    # her record is the others' up to the removal, then holds it; or, when she slept between
    # writing an envelope of her own (written before it is sent) and sending it, that envelope
    # stands where the others' record has the removal, which she heard of as another branch
    theirs = load_transcript(lab.folder / "h.chn").envelopes
    at = [e.kind for e in theirs].index("remove")
    carla = theirs[at].body["seat"]
    assert [e.hash() for e in envs[:at]] == [e.hash() for e in theirs[:at]]
    tail = envs[at:]
    assert [e.hash() for e in tail] == [e.hash() for e in theirs[at:at + 2]] and [e.kind for e in tail] == [
        "remove", "remove"] or tail and all(e.seat == carla and e.kind != "remove" for e in tail), [
        (e.seat, e.kind) for e in tail]


@pytest.mark.slow
@pytest.mark.parametrize("wakes", ["while_they_linger", "after_they_left"])
def test_seat_asleep_until_the_others_finished_learns_the_outcome(lab, wakes):
    """Carla's laptop sleeps (SIGSTOP) while the two others remove her and finish the game.
    Finished, they stay for her (she was removed while away and not yet told), saying so. She
    wakes while they stay: she hears her removal and exits 4, they exit 0. Or she wakes after
    they left: nobody of the table answers, and after ``NOBODY_ANSWERS`` she stops saying so,
    signing nothing, exit 5 (resumable), not after the 15-minute ``stall_limit``.

    Once she is told, they do not linger for her any longer: she keeps her links up
    ``REMOVED_STAYS`` s after learning, and they count her told and exit (well inside their
    linger, here 60 s: without that they would wait it out).

    Shortened for the test: her ``NOBODY_ANSWERS`` (15 s, not 60). After they left, they linger
    the whole 30 s: after a 6 s linger their closed links still held her removal, which she read
    on waking (exit 4)."""
    linger = {"LINGER_FINISHED": 60.0, "LINGER_REMOVED": 60.0} if wakes == "while_they_linger" else None
    ph, pb, pc = start_game(lab, ["--option", "rejoin_wait=5", *FIRST_HAND_GOES_ON], linger, {"NOBODY_ANSWERS": 15.0})
    wait_until(lambda: "draw" in kinds(lab.folder / "c.chn"), what="a draw", lab=lab)
    pc.send_signal(signal.SIGSTOP)
    try:
        wait_until(lambda: "game_end" in kinds(lab.folder / "h.chn"), what="the others' game end", lab=lab)
        if wakes == "after_they_left":
            codes = finish_all([ph, pb])
            assert codes == [0, 0], f"exit codes {codes}\n" + lab.tails(("h", "b"))
            assert "Carla, removed while away, to learn how the game went" in lab.log("h"), lab.tails(("h",))
    finally:
        pc.send_signal(signal.SIGCONT)
    if wakes == "while_they_linger":
        assert pc.wait(timeout=120) == 4, lab.tails(("c", "h"))
        assert "you were removed from the game (absent since hand" in lab.log("c"), lab.tails(("c",))
        told = time.monotonic()
        codes = finish_all([ph, pb])
        assert codes == [0, 0], f"exit codes {codes}\n" + lab.tails(("h", "b"))
        stayed = time.monotonic() - told
        assert stayed < 30.0, f"they lingered {stayed:.0f} s for a seat already told\n" + lab.tails(("h", "b"))
    else:
        assert pc.wait(timeout=150) == 5, lab.tails(("c",))
        assert "nobody of this table answers: they may have finished without you" in lab.log("c"), lab.tails(("c",))
        assert (lab.folder / "c.chn.secrets").exists(), "her record stays resumable"
    assert not [e for e in load_transcript(lab.folder / "c.chn").envelopes if e.kind == "fault"]
    assert (lab.folder / "h.chn").read_bytes() == (lab.folder / "b.chn").read_bytes()
    assert audit_file(lab.folder / "h.chn").verdict == "ok"


def test_seat_gone_for_good_is_removed_and_the_others_finish(lab):
    """A seat killed for good mid-hand: after ``rejoin_wait`` the two others each sign its
    removal, the hand in progress is voided, and they finish the game without it: exit 0,
    byte-identical transcripts, audit ok with the seat recorded as "left", never a cheat."""
    ph, pb, pc = start_game(lab, ["--option", "rejoin_wait=5", *FIRST_HAND_GOES_ON], SHORT_LINGER)
    wait_until(lambda: "draw" in kinds(lab.folder / "c.chn"), what="a draw", lab=lab)
    pc.send_signal(signal.SIGKILL)
    pc.wait()
    codes = finish_all([ph, pb])
    assert codes == [0, 0], f"exit codes {codes}\n" + lab.tails(("h", "b"))
    assert (lab.folder / "h.chn").read_bytes() == (lab.folder / "b.chn").read_bytes()
    envs = load_transcript(lab.folder / "h.chn").envelopes
    carla = [p["name"] for p in envs[1].body["players"]].index("Carla")
    removes = [e for e in envs if e.kind == "remove"]
    assert len(removes) == 2 and {e.body["seat"] for e in removes} == {carla}
    assert {e.seat for e in removes} == {0, 1, 2} - {carla}
    report = audit_file(lab.folder / "h.chn")
    assert report.verdict == "ok" and report.winner != carla, report.summary()
    assert [(m["seat"], m["reason"]) for m in report.marks if m["event"] == "left"] == [(carla, "absent")]
    for n in ("h", "b"):  # every screen says who is awaited, then what happened
        log = lab.log(n)
        assert "Carla disconnected: waiting for them" in log, lab.tails((n,))
        out = "Carla is out of the game for good (absent): the others play on"
        assert out in log, lab.tails((n,))
        # the hand in progress is voided unless it was scored already (the kill can land after
        # its close and showdown on a loaded machine: then its scores stand)
        before = log[:log.index(out)]
        last_deal = list(re.finditer(r"hand \d+: .+ deals", before))[-1].end()
        voided = re.search(r"hand \d+ voided: Carla left", log)
        assert bool(voided) != ("scores:" in before[last_deal:]), lab.tails((n,))
        assert not (lab.folder / f"{n}.chn.secrets").exists()


def test_seat_back_after_its_removal_is_told_and_the_others_finish(lab):
    """The killed seat is restarted with the same command after the others removed it: it
    catches up, sees its removal and stops with one line, exit 4 (removed while away: not a
    fault, not a finished game); the others finish the game.

    Bruno sleeps (SIGSTOP) from the removal until Carla is back and gone: the game cannot end
    before she asks (two bots to a low limit finish in under a second on a fast machine, and a
    seat that finds nobody is rightly "absent", exit 1). The host waits for Bruno up to
    ``rejoin_wait``; Carla needs a second or two of it. The host told her while she was back
    (her link outlived its answer): at the game's end it does not linger for her (its linger
    here 60 s); Bruno, asleep then, never told her himself and may (SHORT_LINGER)."""
    port = free_port()
    cmds = dict(zip("hbc", three_seats(lab, port, ["--option", "rejoin_wait=10", *FIRST_HAND_GOES_ON]), strict=True))
    procs = {"h": lab.start("h", cmds["h"], timings={"LINGER_FINISHED": 60.0, "LINGER_REMOVED": 60.0})}
    time.sleep(1.0)
    procs["b"] = lab.start("b", cmds["b"], timings=SHORT_LINGER)
    procs["c"] = lab.start("c", cmds["c"])
    wait_until(lambda: "draw" in kinds(lab.folder / "c.chn"), what="a draw", lab=lab)
    procs["c"].send_signal(signal.SIGKILL)
    procs["c"].wait()
    wait_until(lambda: kinds(lab.folder / "h.chn").count("remove") == 2, what="the removal", lab=lab)
    procs["b"].send_signal(signal.SIGSTOP)
    try:
        back = lab.start("c2", cmds["c"])
        assert back.wait(timeout=300) == 4, lab.tails(("c2",))
    finally:
        procs["b"].send_signal(signal.SIGCONT)
    assert "you were removed from the game (absent since hand" in lab.log("c2")
    # its record stops at its removal (or at its own last envelope, which the others never
    # got: the removal took that place); it accuses nobody
    assert audit_file(lab.folder / "c.chn").verdict == "incomplete"
    wait_until(lambda: "game_end" in kinds(lab.folder / "h.chn"), what="the game's end", lab=lab)
    ended = time.monotonic()
    assert procs["h"].wait(timeout=120) == 0, lab.tails(("h",))
    stayed = time.monotonic() - ended
    assert stayed < 30.0, f"the host lingered {stayed:.0f} s for a seat it had told\n" + lab.tails(("h",))
    codes = finish_all([procs["h"], procs["b"]])
    assert codes == [0, 0], f"exit codes {codes}\n" + lab.tails(("h", "b"))
    assert (lab.folder / "h.chn").read_bytes() == (lab.folder / "b.chn").read_bytes()
    assert audit_file(lab.folder / "h.chn").verdict == "ok"
    assert not (lab.folder / "c.chn.secrets").exists()


def test_a_seat_cut_off_from_everyone_blames_nobody(lab):
    """Both joiners gone: the host cannot tell who left whom (it may be the one away), so it
    signs nothing: it says it reaches nobody, waits ``stall_limit`` and stops, exit 5, its
    record and secrets kept for ``resume``."""
    ph, pb, pc = start_game(lab, ["--option", "rejoin_wait=3", "--option", "stall_limit=6", *FIRST_HAND_GOES_ON])
    wait_until(lambda: "draw" in kinds(lab.folder / "h.chn"), what="a draw", lab=lab)
    for p in (pb, pc):
        p.send_signal(signal.SIGKILL)
        p.wait()
    assert finish_all([ph]) == [5], lab.tails(("h",))
    assert not [e for e in load_transcript(lab.folder / "h.chn").envelopes if e.kind in ("fault", "remove")]
    assert audit_file(lab.folder / "h.chn").verdict == "incomplete"
    assert (lab.folder / "h.chn.secrets").exists()
    log = lab.log("h")  # what the screen said while it waited, and the line it stopped with
    assert "no other player can be reached" in log and "stopped waiting, signing nothing" in log, lab.tails(("h",))


# ---------------------------------------------------------------- lobby


def test_joiner_leaving_the_lobby_frees_its_seat(lab):
    """A joiner interrupted in the lobby frees its seat at once; the host says so and seats
    another; the game is then played to the end."""
    port = free_port()
    h, b, c = three_seats(lab, port)
    ph = lab.start("h", h)
    time.sleep(1.0)
    ana = lab.start("ana", ["join", "--bot", "--connect", f"127.0.0.1:{port}", "--bind", "127.0.0.1",
                            *JOIN_FAST, "--name", "Ana", "--transcript", "ana.chn"])
    wait_until(lambda: "Ana sat down (2/3)" in lab.log("h"), what="Ana seated", lab=lab)
    ana.send_signal(signal.SIGINT)
    ana.wait(timeout=60)  # leaves at once
    wait_until(lambda: "Ana left (1/3)" in lab.log("h"), limit=30, what="the host to see Ana leave", lab=lab)
    pb, pc = lab.start("b", b), lab.start("c", c)
    assert finish_all([ph, pb, pc]) == [0, 0, 0]
    assert_identical_and_ok(lab.folder)
    names = [p["name"] for p in load_transcript(lab.folder / "h.chn").envelopes[1].body["players"]]
    assert sorted(names) == ["Bruno", "Carla", "bot"]  # Ana is gone


@pytest.mark.slow
def test_joiner_seated_when_the_host_crashes_in_the_lobby_sits_again(lab):
    """The host is killed (kill -9) while Bruno sits in its lobby: Bruno says the lobby
    closed and waits for it, without retyping anything; the host's same command opens the
    lobby again, Bruno sits down again, Carla joins, and the game is played to the end."""
    port = free_port()
    h, b, c = three_seats(lab, port)
    ph = lab.start("h", h)
    time.sleep(1.0)
    pb = lab.start("b", b)
    wait_until(lambda: "Bruno sat down (2/3)" in lab.log("h"), what="Bruno seated", lab=lab)
    ph.send_signal(signal.SIGKILL)
    ph.wait()
    wait_until(lambda: "lobby closed before seating (it may have crashed): waiting up to" in lab.log("b"),
               limit=60, what="Bruno to say the lobby closed", lab=lab)
    assert pb.poll() is None, lab.tails(("b",))
    ph2 = lab.start("h2", h)  # the same command
    wait_until(lambda: "Bruno sat down (2/3)" in lab.log("h2"), what="Bruno seated again", lab=lab)
    pc = lab.start("c", c)
    assert finish_all([ph2, pb, pc]) == [0, 0, 0], lab.tails(("h2", "b", "c"))
    assert_identical_and_ok(lab.folder)


async def test_host_leaving_the_lobby_closes_the_table():
    """The host leaves before the table is full: host_game returns at once with "you left",
    and its lobby port no longer answers."""
    import trio

    from p2p_chinchon.engine import make_rules
    from p2p_chinchon.identity import Identity
    from p2p_chinchon.local import seat_rng
    from p2p_chinchon.net.node import Events
    from p2p_chinchon.net.session import HostConfig, host_game

    class Leaver(Events):
        port = 0
        listening_now = trio.Event()

        def listening(self, port):
            Leaver.port = port
            self.listening_now.set()

        async def wait_leave(self):
            await self.listening_now.wait()

    config = HostConfig(identity=Identity.generate(), rng=seat_rng(1, "h"), player_name="Ana",
                        bind="127.0.0.1", rules=make_rules("classic", {}), seats=3, name="T", advertise=False)
    with trio.fail_after(60):
        result = await host_game(config, Leaver())
    assert result.fault is not None and result.fault.rule == "left" and result.fault.seat == result.seat
    with pytest.raises(OSError):
        await trio.open_tcp_stream("127.0.0.1", Leaver.port)


def test_joiner_started_before_the_host_keeps_looking(lab):
    port = free_port()
    h, b, c = three_seats(lab, port)
    pb = lab.start("b", [*b, "--wait", "60"])
    wait_until(lambda: "still trying" in lab.log("b"), limit=60, what="the joiner to say it keeps trying", lab=lab)
    ph = lab.start("h", h)
    pc = lab.start("c", c)
    assert finish_all([ph, pb, pc]) == [0, 0, 0]
    assert_identical_and_ok(lab.folder)


def test_joiner_gives_up_after_wait(lab):
    port = free_port()
    p = lab.start("b", ["join", "--bot", "--connect", f"127.0.0.1:{port}", "--wait", "2", "--transcript", "b.chn"])
    assert p.wait(timeout=120) == 1
    out = lab.log("b")
    assert "still trying" in out and "p2p-chinchon join:" in out


# ---------------------------------------------------------------- transcript folder


def test_existing_transcript_of_another_game_is_refused(lab, tmp_path):
    old = tmp_path / "old.chn"
    old.write_bytes(b"\x92\x01\x02")  # anything non-empty, with no secrets beside it
    p = lab.start("h", ["host", "--bot", "--no-mdns", "--transcript", str(old)])
    assert p.wait(timeout=120) == 2
    assert "already holds another game's transcript" in lab.log("h")
    assert old.read_bytes() == b"\x92\x01\x02"


def _private_mount(folder: Path, options: str) -> list[str]:
    """A command prefix: run in a private mount namespace where ``folder`` is a tmpfs."""
    return ["unshare", "-m", "sh", "-c", f'mount -t tmpfs -o {options} tmpfs "{folder}" && exec "$@"', "sh"]


def _need_mounts() -> None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("needs root and unshare for a private tmpfs")


@pytest.mark.parametrize("options,why", [("size=16k", "No space left on device"),
                                         ("ro", "Read-only file system")])
def test_unwritable_folder_is_refused_before_sitting_down(lab, tmp_path, options, why):
    _need_mounts()
    folder = tmp_path / "mnt"
    folder.mkdir()
    p = lab.start("h", ["host", "--bot", "--no-mdns", "--transcript", str(folder / "h.chn")],
                  prefix=_private_mount(folder, options))
    assert p.wait(timeout=120) == 2
    assert f"cannot write transcripts in {folder}: {why}" in lab.log("h")


def test_disk_full_mid_game_leaves_saying_why(lab, tmp_path):
    """The host's disk fills up mid-game: it signs a ``leave`` naming the reason; the two others
    remove it ("left") and finish the game without it; nobody is blamed of cheating."""
    _need_mounts()
    folder = tmp_path / "mnt"
    folder.mkdir()
    port = free_port()
    # rejoin_wait: a leave that races another envelope is dropped; the host is then "absent";
    # no chinchón win: a game over in its first hand (a CI run) fits in 96 KiB and never fills it
    h, b, c = three_seats(lab, port, ["--option", "limit=100", "--option", "rejoin_wait=5",
                                      "--option", "chinchon_wins=false"])
    h[h.index("h.chn")] = str(folder / "h.chn")
    ph = lab.start("h", h, prefix=_private_mount(folder, "size=96k"))
    time.sleep(1.0)
    pb, pc = lab.start("b", b), lab.start("c", c)
    codes = finish_all([ph, pb, pc])
    assert codes == [1, 0, 0], f"exit codes {codes}\n" + lab.tails(("h", "b", "c"))
    # whichever file the full disk refuses first (the transcript, or the secrets written before
    # a message that depends on them) is named: both are the same failure, said and signed
    assert re.search(r"cannot (write the transcript|save this seat's secrets): No space left on device",
                     lab.log("h")), lab.log("h")
    assert (lab.folder / "b.chn").read_bytes() == (lab.folder / "c.chn").read_bytes()
    for n in ("b", "c"):
        assert "bot is out of the game for good" in lab.log(n), lab.tails((n,))
        report = audit_file(lab.folder / f"{n}.chn")
        assert report.verdict == "ok", report.summary()
        assert [m["seat"] for m in report.marks if m["event"] == "left"] == [0], report.marks
