"""While the full-screen table runs nothing but the UI writes to the
terminal. Log records (a refused TLS link), prints to stderr and raw writes to file
descriptor 2 go to the log file; a refused connection is told on the message line in the
player's language; Ctrl-L repaints the whole screen. Headless: pipe input, dummy output."""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

from harness.ui_app import next_intent, play, settle, until
from harness.ui_fakes import draw_view
from p2p_chinchon.ui.screen import FINAL


def run(script, log_file, lang="en"):
    return play(script, lang=lang, log_file=log_file)


def test_log_lines_and_stderr_go_to_the_log_file_not_the_terminal(tmp_path, capfd):
    log_file = tmp_path / "chinchon.log"

    async def script(bridge, keys, ui):
        bridge.update(draw_view())
        await settle()
        logging.getLogger("p2p_chinchon.net.mesh").warning(
            "seat 0: refused seat 1 at 127.0.0.1:4000: TLS handshake failed")
        print("a stray print", file=sys.stderr)
        os.write(2, b"a raw write to fd 2\n")
        await until(lambda: "connection was refused" in ui.snapshot(80, 24))
        return ui.snapshot(80, 24)

    screen, _ = run(script, log_file)
    err = capfd.readouterr().err
    assert "refused seat 1" not in err and "stray print" not in err and "raw write" not in err, err
    text = log_file.read_text()
    assert "seat 0: refused seat 1 at 127.0.0.1:4000: TLS handshake failed" in text
    assert "a stray print" in text and "a raw write to fd 2" in text
    assert f"A connection was refused (details in {log_file})"[:60] in screen.replace("\n", "")
    assert "TLS handshake" not in screen
    # after the UI the terminal is the command's again
    print("after the screen", file=sys.stderr)
    logging.getLogger("p2p_chinchon.net.mesh").warning("after: a warning")
    assert "after the screen" in capfd.readouterr().err


def test_refused_notice_speaks_the_players_language(tmp_path):
    async def script(bridge, keys, ui):
        bridge.update(draw_view())
        await settle()
        logging.getLogger("p2p_chinchon.net.mesh").warning("seat 0: refused connection from x: bad")
        await until(lambda: "rechazó" in ui.snapshot(80, 24))
        return True

    assert run(script, tmp_path / "l.log", lang="es")[0]


def test_ctrl_l_repaints_the_whole_screen(tmp_path):
    async def script(bridge, keys, ui):
        bridge.update(draw_view())
        await settle()
        cleared = []
        real = ui.app.renderer.clear

        def clear() -> None:
            cleared.append(1)
            real()

        ui.app.renderer.clear = clear
        keys("\x0c")  # Ctrl-L
        await until(lambda: cleared)
        return ui.screen.mode

    mode, _ = run(script, tmp_path / "l.log")
    assert mode != FINAL


def test_ctrl_z_suspends_and_sigcont_makes_the_screen_raw_and_whole_again(tmp_path):
    """After Ctrl-Z and fg the table redraws and reads keys again."""
    import signal

    async def script(bridge, keys, ui):
        bridge.update(draw_view())
        await settle()
        suspended, cleared = [], []
        ui.app.suspend_to_background = lambda: suspended.append(1)
        real = ui.app.renderer.clear

        def clear() -> None:
            cleared.append(1)
            real()

        ui.app.renderer.clear = clear
        keys("\x1a")  # Ctrl-Z
        await until(lambda: suspended)
        os.kill(os.getpid(), signal.SIGCONT)  # fg
        await until(lambda: cleared)
        keys("s")  # keys are read again
        return await next_intent(bridge)

    got, _ = run(script, tmp_path / "l.log")
    from p2p_chinchon import view as V
    assert got == V.Draw("stock")


def test_a_failure_on_the_full_screen_is_its_one_line_not_a_trio_group():
    """A wrong code word (or any expected failure) raised through trio's nurseries: the final
    screen says its sentence, not ``ExceptionGroup('Exceptions from Trio nursery', ...)``."""
    import asyncio

    import pytest
    from prompt_toolkit.input import create_pipe_input

    from harness.ui_app import Output80x24
    from p2p_chinchon.net.session import CodeWordError
    from p2p_chinchon.ui.app import run_with_ui_async

    apps: list[Any] = []
    shown: list[Any] = []
    with create_pipe_input() as inp:

        async def node_main(bridge):
            loop = asyncio.get_running_loop()

            def finish():
                if apps[0].screen.mode == FINAL:
                    shown.append(apps[0].snapshot(80, 24))
                    inp.send_text("z")
                else:
                    loop.call_later(0.005, finish)

            bridge.update(draw_view())
            await settle()
            loop.call_soon(finish)
            raise ExceptionGroup("Exceptions from Trio nursery", [
                CodeWordError("wrong code word: it does not match the host's")])

        with pytest.raises(ExceptionGroup):  # node_main's, re-raised by run_with_ui_async
            asyncio.run(run_with_ui_async(node_main, lang="en", charset="unicode", pt_input=inp,
                                          pt_output=Output80x24(), on_app=apps.append))
    text = " ".join(shown[0].split())
    assert "wrong code word: it does not match the host's" in text and "ExceptionGroup" not in text, shown[0]
