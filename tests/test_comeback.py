"""A crashed person comes back by running again the command they typed.

Real processes on loopback: the person (line mode, their own identity in their own config
folder, no ``--transcript``) is killed with SIGKILL mid-hand and runs the very same command
again: ``join --connect HOST:PORT`` (the host's lobby is closed while the game runs), and
``host`` (which opened a new, empty lobby under the same name). Each finds the unfinished
game of its identity, resumes it, and the game finishes with identical transcripts that audit
ok. The choice among several games is tested without a network. (By name and by picker the
table is found by mDNS, which needs network namespaces: the same code path, see
``comeback.find_comeback``, runs before any of them looks for a table.)
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from harness import free_port
from harness.comeback import unfinished_game
from harness.procs import CLI, FAST, FIRST_HAND_GOES_ON, JOIN_FAST, Lab, kinds, wait_until
from p2p_chinchon.audit import audit_file
from p2p_chinchon.commands.comeback import choose, matching


@pytest.fixture
def lab(tmp_path):
    lab = Lab(tmp_path)
    yield lab
    lab.close()
    for p in lab.procs:
        if p.stdin is not None:
            p.stdin.close()


# The person's turn clock (1 s) plays each of their moves. Any hand may close from its second
# round, so hands are short (the person's clocked moves made long hands last a minute), and the
# first hand cannot end the game before the kill (FIRST_HAND_GOES_ON: limit 70, no chinchón win).
CLOCK = ["--seed", "3", "--option", "turn_time=1", "--option", "showdown_time=1", *FIRST_HAND_GOES_ON,
         "--option", "close_max_points=1000", "--option", "close_max_unmatched=7"]


def start_person(lab: Lab, label: str, args: list[str], home: Path) -> subprocess.Popen:
    """A person in line mode: stdin stays open (EOF would mean leave); their turn clock plays
    for them; identity and transcripts in ``home``."""
    env = dict(os.environ, PYTHONUNBUFFERED="1", P2P_CHINCHON_LOG="info",
               XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"))
    with open(lab.folder / f"{label}.log", "ab") as log:
        p = subprocess.Popen([*CLI, *args], stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.PIPE,
                             cwd=lab.folder, env=env)
    lab.procs.append(p)
    return p


def agree(p: subprocess.Popen, lab: Lab, label: str) -> None:
    """Type ``agree`` once the table asks for it."""
    wait_until(lambda: "your turn to accept the table" in lab.log(label), what="the offer", lab=lab)
    assert p.stdin is not None
    p.stdin.write(b"agree\n")
    p.stdin.flush()


def transcripts(home: Path) -> list[Path]:
    return sorted((home / "data").rglob("*.chn"))


def finish(procs, limit=400.0) -> list[int]:
    end = time.monotonic() + limit
    return [p.wait(timeout=max(1.0, end - time.monotonic())) for p in procs]


def check_identical_and_ok(a: Path, b: Path) -> None:
    assert a.read_bytes() == b.read_bytes(), "both transcripts are byte-identical"
    report = audit_file(a)
    assert report.verdict == "ok", report.summary()


def test_joiner_killed_comes_back_by_the_same_join_connect(lab):
    port = free_port()
    host = lab.start("h", ["host", "--bot", "--no-mdns", "--port", str(port), "--bind", "127.0.0.1",
                           "--seats", "2", "--transcript", "h.chn", *FAST, *CLOCK])
    home = lab.folder / "bruno"
    cmd = ["join", "--connect", f"127.0.0.1:{port}", "--bind", "127.0.0.1", "--name", "Bruno", "--lines",
           "--seed", "3", *JOIN_FAST]
    time.sleep(1.0)
    person = start_person(lab, "b", cmd, home)
    agree(person, lab, "b")
    wait_until(lambda: transcripts(home) and "draw" in kinds(transcripts(home)[0]),
               what="a draw in Bruno's transcript", lab=lab)
    person.send_signal(signal.SIGKILL)
    person.wait()
    again = start_person(lab, "b2", cmd, home)  # the very same command
    codes = finish([host, again])
    assert codes == [0, 0], f"exit codes {codes}\n" + lab.tails(("h", "b2"))
    assert "you have an unfinished game: resuming" in lab.log("b2"), lab.tails(("b2",))
    [mine] = transcripts(home)
    check_identical_and_ok(lab.folder / "h.chn", mine)


def test_host_killed_comes_back_by_the_same_host_command(lab):
    port = free_port()
    home = lab.folder / "ana"
    cmd = ["host", "--no-mdns", "--open", "--port", str(port), "--bind", "127.0.0.1", "--seats", "2",
           "--name", "Ana", "--lines", *FAST, *CLOCK]
    person = start_person(lab, "h", cmd, home)
    time.sleep(1.0)
    bot = lab.start("b", ["join", "--bot", "--connect", f"127.0.0.1:{port}", "--bind", "127.0.0.1",
                          "--name", "Bruno", "--transcript", "b.chn", "--seed", "3", *JOIN_FAST])
    # the host agrees to its own offer: nothing to type
    wait_until(lambda: transcripts(home) and "draw" in kinds(transcripts(home)[0]),
               what="a draw in Ana's transcript", lab=lab)
    person.send_signal(signal.SIGKILL)
    person.wait()
    again = start_person(lab, "h2", cmd, home)  # the very same command: no new lobby
    codes = finish([bot, again])
    assert codes == [0, 0], f"exit codes {codes}\n" + lab.tails(("h2", "b"))
    assert "you have an unfinished game: resuming" in lab.log("h2"), lab.tails(("h2",))
    [mine] = transcripts(home)
    check_identical_and_ok(mine, lab.folder / "b.chn")


def test_several_unfinished_games_the_typed_one_or_a_question():
    a, b = unfinished_game("Ana's table", "10.0.0.1", 2.0), unfinished_game("Eva's table", "10.0.0.2", 1.0)
    assert matching([a, b], table="Eva's table") == [b]
    assert matching([a, b], connect="10.0.0.1:5000") == [a]
    said: list[str] = []
    assert choose([a], ask=None, out=said.append) is a and not said  # one game: no question
    assert choose([a, b], ask=lambda prompt: "2", out=said.append) is b
    assert '1. "Ana\'s table" with Ana' in "\n".join(said)
    assert choose([a, b], ask=lambda prompt: "", out=said.append) is None  # Enter: a new table
    said.clear()
    assert choose([a, b], ask=None, out=said.append) is None  # nobody to ask: the list, and how
    assert "p2p-chinchon resume PATH" in said[-1]


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_join_by_name_that_finds_nothing_says_so_after_the_full_screen(tmp_path):
    """`join TABLE` in a terminal that finds no table: the full screen goes and one line says
    why (it was written only in line mode), pointing at `resume`."""
    from harness.tmux import Tmux, game_env

    cmd = [*CLI, "join", "Nobody table", "--wait", "0", "--browse", "0.5", "--new"]
    t = Tmux(tmp_path, 80, 24, cmd, game_env(tmp_path))
    try:
        out = t.wait(lambda s: re.search(r"^exit status \d+$", s, re.M), "the process to end", timeout=60,
                     history=True)
    finally:
        t.close()
    assert "exit status 1" in out
    assert "no table found on the LAN named 'Nobody table'" in out.replace("\n", ""), out
    assert "p2p-chinchon resume" in out.replace("\n", ""), out


@pytest.mark.netns
def test_joiner_by_table_name_comes_back_by_the_same_command(tmp_path):
    """In network namespaces through mDNS: a person who joined by the table's name is killed
    mid-hand; the same `join NAME` again (a running table is not advertised, so it must not
    sit on "no table found") finds the unfinished game of its identity and resumes it."""
    from netns import NetnsLab, require_netns

    require_netns()
    env = dict(os.environ, PYTHONUNBUFFERED="1", P2P_CHINCHON_LOG="info",
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"))
    logs = {k: tmp_path / f"{k}.log" for k in ("h", "b", "b2")}
    home = tmp_path / "bruno"
    person_env = dict(env, XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"))
    with NetnsLab(2) as lab:
        def start(i, label, argv, environ, stdin):
            with open(logs[label], "ab") as f:
                return lab.popen(i, [*CLI, *argv], stdin=stdin, stdout=f, stderr=subprocess.STDOUT,
                                 env=environ, cwd=tmp_path)

        host = start(0, "h", ["host", "--bot", "--table-name", "Tarde", *FAST, *CLOCK,
                              "--transcript", str(tmp_path / "h.chn")], env, subprocess.DEVNULL)
        cmd = ["join", "Tarde", "--lines", "--browse", "3", "--name", "Bruno", *JOIN_FAST]
        person = start(1, "b", cmd, person_env, subprocess.PIPE)
        end = time.monotonic() + 120
        while "your turn to accept the table" not in logs["b"].read_text(errors="replace"):
            assert time.monotonic() < end, logs["b"].read_text(errors="replace")
            time.sleep(0.1)
        person.stdin.write(b"agree\n")
        person.stdin.flush()
        while not (transcripts(home) and "draw" in kinds(transcripts(home)[0])):
            assert time.monotonic() < end + 120, logs["b"].read_text(errors="replace")
            time.sleep(0.1)
        person.send_signal(signal.SIGKILL)
        person.wait()
        person.stdin.close()
        again = start(1, "b2", cmd, person_env, subprocess.PIPE)  # the very same command
        try:
            codes = [host.wait(timeout=400), again.wait(timeout=60)]
        finally:
            again.stdin.close()
    text = logs["b2"].read_text(errors="replace")
    assert codes == [0, 0], f"{codes}\n{text[-3000:]}\n{logs['h'].read_text(errors='replace')[-2000:]}"
    assert "you have an unfinished game: resuming" in text, text[-3000:]
    [mine] = transcripts(home)
    check_identical_and_ok(tmp_path / "h.chn", mine)
