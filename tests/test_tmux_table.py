"""The table screen in a real terminal at 80x24 (tmux): questions answered only by y/n, the taken
discard never thrown back by Enter, the hint picks its card, the showdown held until a key and
recalled with l, and the bell (rung on your turn, silent with --no-bell).

Same harness as tests/test_tmux.py: a detached tmux session per test, keys typed with
send-keys, the screen polled with a deadline; a bot peer in its own process over loopback.
"""

from __future__ import annotations

import re
import shutil
import sys
import time

import pytest

from harness import free_port
from harness.tmux import GAME, Tmux, game_env, grab, head, leave

# the command in tmux, as its own process
pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]


def bell(t: Tmux) -> bool:
    return t.run("display-message", "-p", "-t", "t", "#{window_bell_flag}").strip() == "1"


def start(tmp_path, *extra: str) -> Tmux:
    cmd = [sys.executable, "-m", "p2p_chinchon", "play", *GAME, *extra]
    t = Tmux(tmp_path, 80, 24, cmd, game_env(tmp_path))
    t.run("set-option", "-g", "monitor-bell", "on")
    return t


def test_no_game_key_answers_yes_and_enter_keeps_the_taken_card(tmp_path):
    t = start(tmp_path)
    try:
        text = t.wait(lambda s: "your turn: draw a card" in head(s), "our first turn")
        assert bell(t)  # it became our turn
        # while "Leave the table?" is open, s, d and Enter do nothing
        t.keys("q")
        t.wait(lambda s: "Leave the table? y = yes, n = no" in s, "the quit question")
        for k in ("s", "d", "Enter", "o"):
            t.keys(k)
        time.sleep(0.5)
        text = t.screen()
        assert "Leave the table? y = yes, n = no" in text and "your turn: draw a card" in head(text)
        assert "You draw" not in text and "You take" not in text
        t.keys("n")
        t.wait(lambda s: "Leave the table?" not in s, "the question to go away")
        # after taking the discard, Enter does not throw it back
        top = grab(r"Discard pile: (\S+)", text)
        t.keys("d")
        text = t.wait(lambda s: "your turn: discard or close" in head(s), "our discard step")
        picked = re.search(r"Enter discards (\S+)", text)
        assert picked is None or picked.group(1) != top, text
        t.keys("h")  # the hint names a card and picks it
        text = t.wait(lambda s: "Hint: " in s, "the hint")
        hinted = grab(r"Hint: (?:discard|close, putting) (\S+)", text)
        assert f"Enter discards {hinted}" in text, text
        t.keys("Enter")
        t.wait(lambda s: f"You discard {hinted}" in s or "You close" in s, "our discard")
        leave(t)
    finally:
        t.close()


def test_showdown_waits_for_a_key_and_l_recalls_it(tmp_path):
    t = start(tmp_path, "--option", "showdown_time=600", "--no-bell")
    try:
        deadline = time.monotonic() + 240
        while True:  # play badly (draw, throw the drawn card) until a hand ends
            text = t.screen()
            if "as shown:" in text:
                break
            assert time.monotonic() < deadline, text
            if "your turn: draw a card" in head(text):
                t.keys("s")
                t.wait(lambda s: "your turn: draw a card" not in head(s), "the draw")
            elif "your turn: discard or close" in head(text) and "Enter discards" in text:
                t.keys("Enter")
                t.wait(lambda s: "your turn: discard or close" not in head(s) or "as shown" in s,
                       "the discard")
            time.sleep(0.1)
        lines = text.splitlines()
        assert len(lines) <= 24 and all(len(r) <= 80 for r in lines)
        assert re.search(r"^Hand \d+, as shown:$", text, re.M), text
        assert re.search(r"(You|Bruno) closed\.", text) and re.search(r"^Total ", text, re.M)
        assert "any key: back to the table" in lines[-1]
        shown = grab(r"^Hand (\d+), as shown:$", text, re.M)
        # the next hand is dealt meanwhile; the showdown stays until a key
        t.wait(lambda s: f"hand {int(shown) + 1}" in head(s) or "wins the game" in s,
               "the next hand to start", timeout=60)
        assert "as shown:" in t.screen()
        t.keys("x")
        text = t.wait(lambda s: "as shown:" not in s, "the showdown to go")
        t.keys("l")
        t.wait(lambda s: f"Hand {shown}, as shown:" in s, "the recalled showdown")
        t.keys("x")
        text = t.wait(lambda s: "as shown:" not in s, "the recalled showdown to go")
        assert not bell(t)  # --no-bell
        if "wins the game" in text:  # the game is over: l still recalls from the final screen
            # first the rematch question (asked once the held showdown went; l recalled it above)
            t.wait(lambda s: "Rematch: same players" in s, "the rematch question")
            t.keys("n")
            t.wait(lambda s: "l: the last showdown. Press any key to finish." in s, "the final screen")
            assert "you declined the rematch" in t.screen()
            t.keys("l")
            t.wait(lambda s: f"Hand {shown}, as shown:" in s, "the showdown recalled at the end")
            t.keys("x")
            t.wait(lambda s: "Press any key to finish." in s, "the final screen again")
            t.keys("z")
            t.wait(lambda s: re.search(r"^exit status 0$", s, re.M), "the process to end", history=True)
        else:
            leave(t)
    finally:
        t.close()


def test_lobby_shows_the_table_while_it_fills(tmp_path):
    """The joiner sees the table (rules in words) from the moment it connects, then,
    once the host seats it, every seat taken (name and whole fingerprint) and free, and
    "waiting for 1 more"; the host's status line counts the seats still free; both fit 80x24."""
    import subprocess

    fp = r"[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}"
    port = free_port()
    env = game_env(tmp_path)
    (tmp_path / "h").mkdir()
    host = Tmux(tmp_path / "h", 80, 24, [
        sys.executable, "-m", "p2p_chinchon", "host", "--name", "Ana", "--seats", "3",
        "--no-mdns", "--port", str(port), "--bind", "127.0.0.1", "--proof-rounds", "4",
        "--seed", "1"], env)
    guest = None
    bot = None
    try:
        text = host.wait(lambda s: "waiting for 2 more" in s, "the host's status")
        assert "Proposed rules:" in text
        ana_fp = grab(rf"your fingerprint ({fp})", text)
        assert re.search(rf"^  Ana +{ana_fp} \(you\)$", text, re.M), text
        (tmp_path / "g").mkdir()
        guest = Tmux(tmp_path / "g", 80, 24, [  # its own identity key: another laptop
            sys.executable, "-m", "p2p_chinchon", "join", "--connect", f"127.0.0.1:{port}",
            "--name", "Carla", "--min-proof-rounds", "4", "--bind", "127.0.0.1"],
            game_env(tmp_path / "g"))
        text = guest.wait(lambda s: "the game starts when every seat is taken" in s,
                          "the joiner's waiting screen")
        lines = text.splitlines()
        assert len(lines) <= 24 and all(len(r) <= 80 for r in lines)
        assert "Proposed rules:" in text and "Close with all matched" in text
        # the host's person is asked (name and fingerprint) and seats Carla
        text = host.wait(lambda s: "Carla [" in s and "Seat them?" in s, "the host's question")
        carla_fp = grab(rf"Carla \[({fp})\]", text)
        host.keys("y")
        host.wait(lambda s: "waiting for 1 more" in s and re.search(rf"^  Carla +{carla_fp}", s, re.M),
                  "the host's status to count Carla")
        # the joiner's screen: both seats with whole fingerprints, the free one, how many more
        text = guest.wait(lambda s: "waiting for 1 more" in s, "the joiner's seats")
        lines = text.splitlines()
        assert len(lines) <= 24 and all(len(r) <= 80 for r in lines)
        assert re.search(rf"^  Ana +{ana_fp} *$", text, re.M), text
        assert re.search(rf"^  Carla +{carla_fp} \(you\)$", text, re.M), text
        assert re.search(r"^  #2 +\(free seat\)$", text, re.M), text
        assert "Seats 2 of 3 taken" in text and "Press a to agree" not in text
        assert "Proposed rules:" in text
        bot = subprocess.Popen([sys.executable, "-m", "p2p_chinchon", "join", "--connect",
                                f"127.0.0.1:{port}", "--bot", "--quiet", "--name", "Bruno",
                                "--min-proof-rounds", "4", "--bind", "127.0.0.1"],
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        host.wait(lambda s: "Bruno [" in s and "Seat them?" in s, "the host's question for Bruno")
        host.keys("y")
        text = guest.wait(lambda s: "Press a to agree" in s, "the seating")
        assert re.search(rf"Ana +{ana_fp}", text) and re.search(r"Carla +\S+.*\(you\)", text), text
        assert re.search(r"^  Bruno +\S+", text, re.M) and "(free seat)" not in text
        # the seating is signed: the status stops counting free seats (one redraw later)
        host.wait(lambda s: re.search(r"^  Bruno +\S+", s, re.M) and not re.search(r"waiting for \d+ more", s),
                  "the host's seating")
    finally:
        for t in (host, guest):
            if t is not None:
                t.close()
        if bot is not None:
            bot.kill()
            bot.wait()


def test_an_error_at_start_is_one_line_and_an_exit_code(tmp_path):
    """A code word whose mailbox cannot be reached stops the command before any game: the full
    screen goes away by itself, and the shell shows the one line and the exit code (no
    final screen waiting for a key, no line cut at the window's edge)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed once the block ends: nobody answers there
    cmd = [sys.executable, "-m", "p2p_chinchon", "join", "--name", "Bea", "--code", "7-crossover-clockwork",
           "--mailbox", f"ws://127.0.0.1:{port}/v1", "--new"]
    t = Tmux(tmp_path, 80, 24, cmd, game_env(tmp_path))
    try:
        text = t.wait(lambda s: re.search(r"^exit status \d+$", s, re.M) or "Press any key" in s,
                      "the command to stop", timeout=60, history=True)
        assert "Press any key" not in text, text
        assert re.search(r"^exit status 1$", text, re.M), text
        line = "".join(text.split("\n")).replace(" ", "")  # the one line, whatever it wrapped to
        assert f"p2p-chinchonjoin:cannotreachthemailboxatws://127.0.0.1:{port}/v1" in line, text
    finally:
        t.close()
