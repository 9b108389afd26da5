"""Only this identity's own unfinished games are offered or resumed (a newcomer's report): after
a quit ``play`` game the person's seat and three local bot peers share the data folder, and each
bot transcript's seating holds the person's key too. Which seat wrote a transcript is told by the
secrets beside it (``seat_key``, or a bot's kept identity seed); ``resume`` of another seat's
file refuses in one line instead of playing (and signing) as that bot. In process, no network."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.comeback import unfinished_game
from p2p_chinchon import table as tbl
from p2p_chinchon.cli import main
from p2p_chinchon.commands import comeback as cb
from p2p_chinchon.commands.comeback import choose, unfinished_games
from p2p_chinchon.engine import make_rules
from p2p_chinchon.identity import Identity, load_or_create_identity
from p2p_chinchon.net.node import secrets_path_for, write_secrets
from p2p_chinchon.rng import SeededRng
from p2p_chinchon.transcript import TranscriptWriter

BOTS = ("Bruno", "Carla", "Diego")


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    return tmp_path


def played_and_quit(folder: Path, person: Identity, *, legacy: bool) -> dict[str, Path]:
    """The data folder a quit ``play`` leaves: the person (seat 0, "Ana") and three bots, each
    with its transcript of the same seated game and its secrets as the node saves them (a bot
    keeps its identity seed; ``legacy``: files saved before ``seat_key`` was recorded)."""
    rng = SeededRng("own/host")
    bots = [Identity.generate(SeededRng(f"own/{n}")) for n in BOTS]
    host = tbl.Table.create(person, rng, name="Ana's table", rules=make_rules("classic", {}), max_seats=4,
                            addr="127.0.0.1:9000")
    for i, (n, b) in enumerate(zip(BOTS, bots, strict=True)):
        host.lobby.seat_host(n, b.public_bytes, f"127.0.0.1:{9001 + i}")
    host.start()
    folder.mkdir(parents=True)
    paths = {}
    for name, ident, bot in (("Ana", person, False), *((n, b, True) for n, b in zip(BOTS, bots, strict=True))):
        path = paths[name] = folder / f"seat-{name}.chn"
        with TranscriptWriter(path, fsync=False) as w:
            for frame in host.chain.frames:
                w.append(frame)
        secrets = {"toss_nonce": b"\0" * 16, "keys": {}}
        if not legacy:
            secrets["seat_key"] = ident.public_bytes
        if bot:
            secrets["identity"] = ident.seed()
        write_secrets(secrets_path_for(path), secrets)
    return paths


@pytest.mark.parametrize("legacy", [False, True])
def test_only_the_persons_own_transcript_is_offered(home, legacy):
    person = load_or_create_identity()
    folder = home / "data" / "p2p-chinchon" / "transcripts"
    paths = played_and_quit(folder, person, legacy=legacy)
    games = unfinished_games(folder, person.public_bytes, recent=None)
    assert [g.path for g in games] == [paths["Ana"]]
    assert games[0].seat == 0 and games[0].name == "Ana's table"
    assert len(unfinished_games(folder, None, recent=None)) == 4  # any seat's: all four


def test_resume_of_a_bots_transcript_refuses_in_one_line(home, capsys):
    person = load_or_create_identity()
    paths = played_and_quit(home / "data" / "p2p-chinchon" / "transcripts", person, legacy=True)
    assert cb.not_yours(paths["Ana"], person.public_bytes) is None
    assert main(["resume", str(paths["Carla"])]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "written by Carla's seat, not by you" in err[0], err
    assert secrets_path_for(paths["Carla"]).exists()  # nothing played or signed for Carla


def test_the_no_terminal_hint_names_a_command_that_has_new():
    games = [unfinished_game("Ana's table", "10.0.0.1", 2.0), unfinished_game("Eva's table", "10.0.0.2", 1.0)]
    said: list[str] = []
    choose(games, ask=None, out=said.append, command="host")
    assert said[-1].endswith("(or start afresh with p2p-chinchon host --new)")
    choose(games, ask=None, out=said.append)  # resume has no --new
    assert "p2p-chinchon host --new or join --new" in said[-1]


def test_a_bot_seat_keeps_its_key_and_its_same_command_finds_its_unfinished_game(home):
    """``join --bot`` / ``host --bot`` keep the seat's key in the config folder (one per name,
    apart from play's own bot peers), so the same command finds that seat's unfinished game,
    as a person's does; a joining bot says yes to a rematch, a hosting bot plays one game."""
    import os
    from argparse import Namespace

    from p2p_chinchon.cli import build_parser
    from p2p_chinchon.commands import _common as C
    from p2p_chinchon.identity import default_config_dir

    args = Namespace(bot=True, new=False, bot_identity=None, connect=None)
    first = C.bot_seat_identity(args, "Rosa")
    assert C.bot_seat_identity(args, "Rosa") == first  # kept between runs
    assert (default_config_dir() / "bot-seats" / "Rosa" / "identity.key").exists()
    assert C.bot_seat_identity(args, "Tomás") != first
    assert load_or_create_identity(default_config_dir() / "bots" / "Rosa") != first  # play's Rosa is another
    assert C.bot_seat_identity(args, "../x") == load_or_create_identity(default_config_dir() / "bot-seats" / "___x")

    person = load_or_create_identity()
    paths = played_and_quit(home / "data" / "p2p-chinchon" / "transcripts", person, legacy=False)
    for name in BOTS[:2]:  # the key the bot seat played with, where its command keeps it
        folder = default_config_dir() / "bot-seats" / name
        folder.mkdir(parents=True, mode=0o700)
        key = folder / "identity.key"
        key.write_bytes(Identity.generate(SeededRng(f"own/{name}")).to_pem())
        os.chmod(key, 0o600)
        bot = C.bot_seat_identity(args, name)
        assert cb.find_comeback(args, "join", key=bot.public_bytes) == paths[name]
    assert cb.find_comeback(Namespace(**{**vars(args), "new": True}), "join", key=bot.public_bytes) is None

    assert build_parser(["join"]).parse_args(["join", "--bot"]).rematch == C.REMATCH_ALWAYS
    assert build_parser(["host"]).parse_args(["host", "--bot"]).rematch == 0
