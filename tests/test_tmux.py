"""`p2p-chinchon play --bots 1` as a person uses it: in a real terminal (tmux), and piped.

The tmux tests start the command in a detached tmux session of a fixed size, type keys with
``tmux send-keys``, read the screen with ``tmux capture-pane`` and play a few turns against a
bot peer (a separate process, the full protocol over loopback), then leave with q, y. Every
wait polls the screen with a deadline. Skipped when tmux is not installed.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from harness.tmux import GAME, Tmux, game_env, grab, head
from p2p_chinchon.audit import audit_file

pytestmark = pytest.mark.slow  # the command in tmux or piped, as its own process


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("cols, rows", [(100, 30), (80, 24)])
def test_play_in_a_terminal_a_few_turns_then_leave(tmp_path, cols, rows):
    cmd = [sys.executable, "-m", "p2p_chinchon", "play", *GAME]
    t = Tmux(tmp_path, cols, rows, cmd, game_env(tmp_path))
    try:
        # the table comes up with our hand, the discard pile and the stock, our turn to draw
        text = t.wait(lambda s: "your turn: draw a card" in head(s), "our first turn")
        lines = text.splitlines()
        assert len(lines) <= rows and all(len(r) <= cols for r in lines)
        assert "p2p-chinchón" in lines[0]
        assert re.search(r"^▶ Ana +\S+ +7 cards +total 0 +\(you\)", text, re.M), text
        assert re.search(r"^  Bruno +\S+ +7 cards +total 0", text, re.M), text
        assert re.search(r"^Discard pile: \S+ \(1\) +Stock: \d+$", text, re.M), text
        assert re.search(r"^Your hand: deadwood \d+", text, re.M), text
        hand_row = lines[[i for i, r in enumerate(lines) if r.startswith("Your hand")][0] + 1]
        assert len(re.findall(r"(?:10|[A2-7JQK])[♦♥♠♣]", hand_row)) == 7, hand_row
        assert lines[-1].startswith("s draw stock · d take discard")
        for _turn in range(3):
            stock = int(grab(r"Stock: (\d+)", text))
            t.keys("s")
            text = t.wait(lambda s: "your turn: discard or close" in head(s)
                          and "8 cards" in s and "Enter discards" in s, "our discard step")
            assert f"Stock: {stock - 1}" in text
            assert "You draw from the stock" in text
            drawn = grab(r"Enter discards (\S+)", text)  # the drawn card is picked
            t.keys("Enter")
            text = t.wait(lambda s, drawn=drawn: f"You discard {drawn}" in s and (
                "your turn: draw a card" in head(s) or "wins the game" in s), "the bot's turn")
            assert re.search(r"^Discard pile: \S+ \(\d+\)", text, re.M)
            if "wins the game" in text:
                break
        assert "Bruno draws" in text or "Bruno takes" in text  # the bot peer played too
        # leave: q asks first, n keeps playing, q y leaves the table cleanly
        t.keys("q")
        text = t.wait(lambda s: "Leave the table? y = yes, n = no" in s, "the quit question")
        t.keys("n")
        t.wait(lambda s: "Leave the table?" not in s, "the question to go away")
        t.keys("q")
        t.wait(lambda s: "Leave the table? y = yes, n = no" in s, "the quit question again")
        t.keys("y")
        text = t.wait(lambda s: "Press any key to finish." in s, "the final screen")
        assert "You left the table" in text and "Blamed" not in text
        t.keys("z")
        out = t.wait(lambda s: re.search(r"^exit status \d+$", s, re.M), "the process to end",
                     history=True)
        status = int(grab(r"^exit status (\d+)$", out, re.M))
        assert "Traceback" not in out
        assert status == 0, out  # leaving on purpose is a clean exit
        assert re.search(r"^you left the table$", out, re.M), out
        assert re.search(r"^totals: Ana \d+, Bruno \d+$", out, re.M), out
        assert re.search(r"^transcript: ", out, re.M), out
    finally:
        t.close()
    # our own transcript of the game so far audits as a properly stopped table
    [path] = (tmp_path / "data").rglob("seat-host.chn")
    report = audit_file(path)
    assert report.verdict == "incomplete", report.summary()  # valid, stopped by our leaving


def test_line_mode_piped_script(tmp_path):
    """Standard input not a terminal: the plain line mode reads commands, one per line."""
    script = "s\ndiscard 8\nhint\ns\ndiscard 8\nquit\n"
    proc = subprocess.run([sys.executable, "-m", "p2p_chinchon", "play", "--lines", *GAME],
                          input=script, capture_output=True, text=True, timeout=60,
                          env=game_env(tmp_path))
    out = proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 1), out + proc.stderr
    assert out.count("Your turn: draw stock or draw discard.") >= 2, out
    assert out.count("Your turn: discard CARD or close CARD.") >= 2, out
    assert re.search(r"^   Your hand: deadwood \d+.*: (\S+ ){6}\S+$", out, re.M), out
    discards = re.findall(r"^   You discard (\S+)$", out, re.M)
    draws = re.findall(r"^   You draw from the stock$", out, re.M)
    assert len(draws) == 2 and len(discards) == 2, out
    assert "Hint: " in out
    assert re.search(r"^   Bruno (draws from the stock|takes \S+ from the discard pile)$", out, re.M)
    assert "You left" in out and "transcript: " in out
