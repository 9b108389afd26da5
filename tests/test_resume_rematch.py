"""A resumed game cannot continue into a rematch: its own player reads why."""

from __future__ import annotations

import io
import sys

from p2p_chinchon import cli
from p2p_chinchon.net.node import NodeResult


def test_a_resumed_game_says_why_there_is_no_rematch(tmp_path, monkeypatch, capsys):
    """An evening of rematches: a seat that came back (resume, or the same host/join typed again)
    cannot play a rematch; the others are told (R 0x02), and its own player reads why."""
    from p2p_chinchon.commands import comeback
    from p2p_chinchon.net import session

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setattr(comeback, "not_yours", lambda path, key: None)

    async def resumed(config, events):
        return NodeResult(winner=1, fault=None, transcript=None, head=b"", totals=[40, 10], seat=0,
                          names=["Ana", "Bruno"])

    monkeypatch.setattr(session, "resume_game", resumed)
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    path = tmp_path / "game.chn"
    path.write_bytes(b"")
    cli.main(["resume", str(path), "--lines"])
    out = capsys.readouterr()
    assert "no rematch from a game you came back to: run host or join again for a new game" in out.out + out.err
