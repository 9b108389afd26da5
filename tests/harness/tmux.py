"""The terminal tests' harness: one detached tmux server per test (its own socket) running one
command in a fixed-size window, keys typed with ``send-keys`` and the screen read with
``capture-pane``; every wait polls the screen with a deadline."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

GAME = ["--bots", "1", "--proof-rounds", "4", "--seed", "1", "--option", "limit=20"]


def game_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_CONFIG_HOME=str(tmp_path / "config"), LANG="C.UTF-8", LC_ALL="C.UTF-8")
    env.pop("NO_COLOR", None)
    return env


class Tmux:
    """One detached tmux server and session (its own socket) running one command."""

    def __init__(self, tmp_path: Path, cols: int, rows: int, cmd: list[str], env: dict[str, str]):
        self.sock = str(tmp_path / "tmux.sock")
        self.cols, self.rows = cols, rows
        shell = " ".join(f"'{a}'" for a in cmd)
        exports = " ".join(f"{k}='{env[k]}'" for k in
                           ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "LANG", "LC_ALL", "PATH"))
        # the shell reports the exit status itself (tmux's pane_dead_status can lag behind)
        self.run("-f", "/dev/null", "new-session", "-d", "-s", "t", "-x", str(cols), "-y", str(rows),
                 f"env {exports} {shell}; echo \"exit status $?\"", ";",
                 "set-option", "-t", "t", "remain-on-exit", "on")

    def run(self, *args: str) -> str:
        out = subprocess.run(["tmux", "-S", self.sock, *args], capture_output=True, text=True,
                             timeout=10)
        if out.returncode != 0:
            raise RuntimeError(f"tmux {args[0]}: {out.stderr.strip()}")
        return out.stdout

    def screen(self, history: bool = False) -> str:
        """The visible screen (``history``: with the lines scrolled off the top)."""
        return self.run("capture-pane", "-p", "-t", "t", *(["-S", "-"] if history else []))

    def keys(self, *keys: str) -> None:
        self.run("send-keys", "-t", "t", *keys)

    def wait(self, cond, what: str, timeout: float = 20.0, history: bool = False) -> str:
        """Poll the screen until ``cond(text)`` holds; fail with the last screen otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen(history)
            if cond(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}; screen:\n{text}")
            time.sleep(0.05)

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.sock, "kill-server"], capture_output=True, timeout=10)


def grab(pattern: str, text: str, flags: int = 0) -> str:
    """The first group of ``pattern``'s first match in ``text``, which the test knows is there."""
    m = re.search(pattern, text, flags)
    assert m is not None, f"{pattern!r} not in:\n{text}"
    return m.group(1)


def head(text: str) -> str:
    return text.splitlines()[0] if text else ""


def leave(t: Tmux) -> None:
    """Quit the table (q, y), pass its final screen, and wait for the process to end."""
    t.keys("q")
    t.wait(lambda s: "Leave the table? y = yes, n = no" in s, "the quit question")
    t.keys("y")
    t.wait(lambda s: "Press any key to finish." in s, "the final screen")
    t.keys("z")
    t.wait(lambda s: re.search(r"^exit status \d+$", s, re.M), "the process to end", history=True)
