"""``p2p-chinchon play``: a whole game on this laptop against local bot peers.

Every bot is a separate peer (by default a separate process) with its own identity key,
table, mesh links and transcript, running the full protocol over loopback: the same code
that plays across a LAN. ``--no-ui`` makes every seat a bot and prints the game.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from p2p_chinchon.commands import _common as C, _fork


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bots", type=int, default=3, metavar="N", help="bot peers besides you (1-7, default 3)")
    C.add_rules_arguments(p)
    p.add_argument("--seed", type=int, default=None, help="reproducible game (bots and deck; NOT secret: demos and tests only)")
    p.add_argument("--no-ui", action="store_true", help="every seat is a bot; print the game as it goes")
    p.add_argument("--in-process", action="store_true", help="run the bot peers in this process instead of separate processes")
    p.add_argument("--proof-rounds", type=int, default=64, metavar="K", help="shadow shuffles per shuffle proof (soundness 2^-K; default 64)")
    p.add_argument("--bot-start", choices=["fork", "exec"], default=None, help=(
        "how the bot peers' processes start: forked from this one once it has loaded what they run "
        "(the default where the system can fork: ~2 ms each instead of ~0.4 s of imports), or each "
        "a new interpreter"))
    C.add_play_arguments(p)


def _own_name() -> str:
    """The person's name at a ``play`` table without ``--name``: the login name, capitalised
    (it is signed into the transcript, so never a UI word such as "You"/"Tú");
    "Ana" for root or when none can be read."""
    import getpass

    try:
        login = getpass.getuser()
    except (OSError, KeyError):
        login = ""
    login = login.strip()
    if not login or login == "root" or not login.isprintable() or len(login.encode()) > 32:
        return "Ana"
    return login[:1].upper() + login[1:]


def run(args: argparse.Namespace) -> int:
    if not 1 <= args.bots <= 7:
        print("p2p-chinchon play: --bots must be 1-7", file=sys.stderr)
        return 2
    rules = C.make_rules(args)
    C.check_seats(rules, args.bots + 1, "play")
    from p2p_chinchon.i18n import Translator

    tr = Translator(args.lang)
    names = [_own_name() if not args.no_ui else "Ana"] + ["Bruno", "Carla", "Diego", "Elena", "Fermín", "Gloria", "Hugo"][: args.bots]
    levels = C.bot_levels(args, args.bots, "play")  # one per bot peer, in seat order
    if args.name:
        names[0] = args.name
    folder = C.default_transcript("play").with_suffix("")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        folder = Path(tempfile.mkdtemp(prefix="p2p-chinchon-"))
    my_path = args.transcript or folder / "seat-host.chn"
    C.check_transcript_path(my_path, "play")
    human = not args.no_ui and not args.bot
    # The lobby listens, and the bot peers start, before trio, the table and the crypto load
    # here: the bots load theirs meanwhile and wait in the lobby's queue.
    sockets = C.open_lobby("127.0.0.1", args, "play")
    if sockets is None:
        return 1
    port = sockets[0].getsockname()[1]
    bots: list[tuple[list[str], Path, subprocess.Popen[bytes] | _fork.ForkedPeer]] = []  # (command, log, first process)
    fork = not args.in_process and (args.bot_start or ("fork" if _fork.available() else "exec")) == "fork"
    if fork:
        _fork.preload()  # once, here: every bot peer forked below starts with it loaded
    if not args.in_process:
        for i in range(1, args.bots + 1):
            cmd = [sys.executable, "-m", "p2p_chinchon", "join", "--connect", f"127.0.0.1:{port}",
                   "--bot", "--quiet", "--name", names[i], "--transcript", str(folder / f"seat-{names[i]}.chn"),
                   "--bind", "127.0.0.1", "--bot-level", levels[i - 1]]
            if human:  # the same bot keys game after game: the evening's tally adds up
                from p2p_chinchon.identity import default_config_dir

                cmd += ["--bot-identity", str(default_config_dir() / "bots" / names[i]), "--rematch"]
            if args.seed is not None:
                cmd += ["--seed", str(args.seed)]
            if args.proof_rounds < 64:  # the person chose weak proofs for this local game
                cmd += ["--min-proof-rounds", str(args.proof_rounds)]
            if args.timeout:
                cmd += ["--timeout", str(args.timeout)]
            log = folder / f"seat-{names[i]}.log"  # keep bots' output off the player's screen
            if fork:  # its own process, keys and transcript; the code already loaded
                bots.append((cmd, log, _fork.fork_peer(cmd[3:], log, sockets)))
                continue
            with open(log, "ab") as out:  # (started from this main thread: its death signal is play's exit)
                bots.append((cmd, log, subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                                        preexec_fn=functools.partial(_fork.die_with_parent, os.getpid()))))

    async def main(bridge: Any = None, on_update: Any = None) -> Any:
        import trio

        from p2p_chinchon.identity import Identity, load_or_create_identity
        from p2p_chinchon.local import seat_rng
        from p2p_chinchon.net.session import HostConfig, host_game

        identity = load_or_create_identity() if human else Identity.generate()
        rng = seat_rng(args.seed, "host")
        # with --no-ui your own seat plays at the first bot's level
        glue = C.SeatGlue(bridge, bot=not human, rules=rules, rng=rng, printer=on_update, live=C.live_screen(args),
                          level=levels[0], lang=args.lang, rematch=1 if human else 0)
        events = glue.events()
        async with trio.open_nursery() as nursery:
            def listening(port: int) -> None:
                if args.in_process:
                    nursery.start_soon(_in_process_bots, rules, args, names, port, folder, levels)

            for cmd, log, first in bots:
                nursery.start_soon(_run_bot_process, cmd, log, first)
            nursery.start_soon(glue.forward)
            events.listening = listening  # type: ignore[method-assign]  # this instance's callback
            config = HostConfig(
                identity=identity, rng=rng, player_name=names[0], transcript_path=my_path,
                timeouts=C.make_timeouts(args), bind="127.0.0.1", rules=rules, seats=args.bots + 1,
                name=f"{names[0]}'s table"[:64],
                proof_rounds=args.proof_rounds, advertise=False, sockets=sockets,
            )

            async def game(n: int, last: Any) -> Any:
                """Game 1; a rematch (everyone said yes at game over; play's bots always do): the
                same port, seats and rules, a new game id and new randomness; only the same
                players are seated (the bot peers join again by themselves)."""
                if last is None:
                    return await host_game(config, events)
                return await host_game(dataclasses.replace(
                    config, rng=seat_rng(args.seed, f"host/{n}"), transcript_path=C.rematch_path(my_path, n),
                    sockets=None, port=port, approve=C.same_players(last)), events)

            result = await C.play_evening(game, human, glue)
            with trio.move_on_after(5):
                for _, _, first in bots:
                    await _wait(first)
            nursery.cancel_scope.cancel()
        for _, log, _ in bots:  # a bot that said nothing leaves no empty file behind
            if log.exists() and log.stat().st_size == 0:
                log.unlink()
        return result

    try:
        result = C.run_reporting(main, args, human, "play")
    finally:
        for _, _, first in bots:  # the node failed before it watched them
            if first.poll() is None:
                first.kill()
                first.wait()
        for sock in sockets:  # closed by the lobby, unless the node failed before it ran
            sock.close()
    if result is None:
        return 1
    C.print_result(result, names, lang=args.lang)
    if human:
        C.print_tally(result, lang=args.lang)  # the evening among the same players
    print(tr("exit_all", path=folder))
    C.print_error(result)  # "you left the table" alone would hide why the node left
    return C.exit_code(result)


async def _wait(proc: Any) -> None:
    """Wait for a trio process, or poll a ``subprocess.Popen`` (started before trio loaded) or
    a forked peer."""
    import trio

    if isinstance(proc, (subprocess.Popen, _fork.ForkedPeer)):
        while proc.poll() is None:
            await trio.sleep(0.05)
    else:
        await proc.wait()


async def _run_bot_process(cmd: list[str], log: Path, first: subprocess.Popen[bytes] | _fork.ForkedPeer) -> None:
    """Watch one bot peer (``first``: its process, already started by ``cmd`` or forked to run
    it); if it is killed
    (a signal) mid-game, run the same command again: it resumes the game from its transcript
    and saved secrets, at most 3 times."""
    import trio

    from p2p_chinchon.net.node import secrets_path_for

    transcript = Path(cmd[cmd.index("--transcript") + 1])
    proc: Any = first
    for attempt in range(4):
        if attempt:
            with open(log, "ab") as out:
                proc = await trio.lowlevel.open_process(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
        try:
            await _wait(proc)
        finally:
            if proc.returncode is None:
                proc.kill()
        if proc.returncode >= 0 or not secrets_path_for(transcript).exists():
            return


async def _in_process_bots(rules: Any, args: argparse.Namespace, names: list[str], port: int, folder: Path,
                           levels: list[str]) -> None:
    import trio

    from p2p_chinchon.identity import Identity
    from p2p_chinchon.local import seat_rng
    from p2p_chinchon.net.session import JoinConfig, join_game

    async with trio.open_nursery() as nursery:
        for i in range(1, args.bots + 1):
            rng = seat_rng(args.seed, f"bot/{names[i]}")
            config = JoinConfig(
                identity=Identity.generate(), rng=rng, player_name=names[i],
                transcript_path=folder / f"seat-{names[i]}.chn", timeouts=C.make_timeouts(args),
                bind="127.0.0.1", auto_agree=True, host="127.0.0.1", port=port,
                min_proof_rounds=min(args.proof_rounds, 40),
            )
            glue = C.SeatGlue(None, bot=True, rules=rules, rng=rng, level=levels[i - 1])
            nursery.start_soon(join_game, config, glue.events())
            await trio.sleep(0.05)
