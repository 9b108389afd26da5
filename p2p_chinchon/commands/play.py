"""``p2p-chinchon play``: a whole game on this laptop against local bot peers.

Every bot is a separate peer (by default a separate process) with its own identity key,
table, mesh links and transcript, running the full protocol over loopback: the same code
that plays across a LAN. ``--no-ui`` makes every seat a bot and prints the game.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from p2p_chinchon.commands import _common as C


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bots", type=int, default=3, metavar="N", help="bot peers besides you (1-7, default 3)")
    C.add_rules_arguments(p)
    p.add_argument("--seed", type=int, default=None, help="reproducible game (bots and deck; NOT secret: demos and tests only)")
    p.add_argument("--no-ui", action="store_true", help="every seat is a bot; print the game as it goes")
    p.add_argument("--in-process", action="store_true", help="run the bot peers in this process instead of separate processes")
    p.add_argument("--proof-rounds", type=int, default=64, metavar="K", help="shadow shuffles per shuffle proof (soundness 2^-K; default 64)")
    C.add_play_arguments(p)


def run(args: argparse.Namespace) -> int:
    import trio

    if not 1 <= args.bots <= 7:
        print("p2p-chinchon play: --bots must be 1-7", file=sys.stderr)
        return 2
    rules = C.make_rules(args)
    C.check_seats(rules, args.bots + 1, "play")
    levels = C.bot_levels(args, args.bots, "play")  # one per bot peer, in seat order
    names = ["You" if not args.no_ui else "Ana"] + ["Bruno", "Carla", "Diego", "Elena", "Fermín", "Gloria", "Hugo"][: args.bots]
    if args.name:
        names[0] = args.name
    folder = C.default_transcript("play").with_suffix("")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        folder = Path(tempfile.mkdtemp(prefix="p2p-chinchon-"))
    my_path = args.transcript or folder / "seat-host.chn"
    human = not args.no_ui and not args.bot

    async def main(bridge: Any = None, on_update: Any = None) -> Any:
        from p2p_chinchon.identity import Identity, load_or_create_identity
        from p2p_chinchon.local import seat_rng
        from p2p_chinchon.net.session import host_game

        identity = load_or_create_identity() if human else Identity.generate()
        rng = seat_rng(args.seed, "host")
        # with --no-ui your own seat plays at the first bot's level
        glue = C.SeatGlue(bridge, bot=not human, rules=rules, rng=rng, printer=on_update, level=levels[0])
        procs: list[Any] = []

        async def spawn_bots(port: int, nursery: Any) -> None:
            for i in range(1, args.bots + 1):
                cmd = [sys.executable, "-m", "p2p_chinchon", "join", "--connect", f"127.0.0.1:{port}",
                       "--bot", "--quiet", "--name", names[i], "--transcript", str(folder / f"seat-{names[i]}.chn"),
                       "--bind", "127.0.0.1", "--bot-level", levels[i - 1]]
                if args.seed is not None:
                    cmd += ["--seed", str(args.seed)]
                if args.proof_rounds < 40:  # the person chose weak proofs for this local game
                    cmd += ["--min-proof-rounds", str(args.proof_rounds)]
                if args.timeout:
                    cmd += ["--timeout", str(args.timeout)]
                log = folder / f"seat-{names[i]}.log"  # keep bots' output off the player's screen
                procs.append(await nursery.start(_run_bot_process, cmd, log))

        async with trio.open_nursery() as nursery:
            def listening(port: int) -> None:
                if args.in_process:
                    nursery.start_soon(_in_process_bots, rules, args, names, port, folder, levels)
                else:
                    nursery.start_soon(spawn_bots, port, nursery)

            nursery.start_soon(glue.forward)
            result = await host_game(
                identity=identity, rng=rng, rules=rules, seats=args.bots + 1, name=("Your table" if names[0] == "You" else f"{names[0]}'s table")[:64],
                player_name=names[0], transcript_path=my_path, timeouts=C.make_timeouts(args),
                proof_rounds=args.proof_rounds, bind="127.0.0.1", advertise=False, on_listening=listening,
                **glue.kwargs(),
            )
            with trio.move_on_after(5):
                for p in procs:
                    await p.wait()
            nursery.cancel_scope.cancel()
        return result

    result = C.run_reporting(main, args, human, "play")
    if result is None:
        return 1
    C.print_result(result, names)
    print(f"all transcripts: {folder}")
    return C.exit_code(result)


async def _run_bot_process(cmd: list[str], log: Path, task_status: Any) -> None:
    import trio

    with open(log, "ab") as out:
        proc = await trio.lowlevel.open_process(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out)
    task_status.started(proc)
    try:
        await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()


async def _in_process_bots(rules: Any, args: argparse.Namespace, names: list[str], port: int, folder: Path,
                           levels: list[str]) -> None:
    import trio

    from p2p_chinchon.autoplay import bot_decider
    from p2p_chinchon.identity import Identity
    from p2p_chinchon.local import make_bot, seat_rng
    from p2p_chinchon.net.session import join_game

    async with trio.open_nursery() as nursery:
        for i in range(1, args.bots + 1):
            rng = seat_rng(args.seed, f"bot/{names[i]}")
            nursery.start_soon(lambda rng=rng, i=i: join_game(
                identity=Identity.generate(), rng=rng, host="127.0.0.1", port=port, player_name=names[i],
                decide=bot_decider(make_bot(rules, rng, levels[i - 1])), transcript_path=folder / f"seat-{names[i]}.chn",
                auto_agree=True, bind="127.0.0.1", timeouts=C.make_timeouts(args),
                min_proof_rounds=min(args.proof_rounds, 40),
            ))
            await trio.sleep(0.05)
