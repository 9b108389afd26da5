"""Terminal front ends: they render :class:`p2p_chinchon.view.SeatView` and send intents.

* :func:`p2p_chinchon.ui.app.run_with_ui` - full-screen prompt_toolkit table (asyncio host
  loop, the node in trio guest mode).
* :func:`p2p_chinchon.ui.lines.run_line_mode` - plain line mode for scripts (plain trio.run).
* :class:`p2p_chinchon.ui.bridge.UiBridge` - what the node driver holds: ``update(view)``,
  ``set_status(text)``, ``reject(reason)``, ``await ask(question)``,
  ``await pick_table(tables)``, and the ``intents`` channel.
* :mod:`~p2p_chinchon.ui.screen` (layout and keys, pure; its parts in ``screen_state``,
  ``screen_keys``, ``screen_layout``), :mod:`~p2p_chinchon.ui.render`
  (card faces, typed card names), :mod:`~p2p_chinchon.ui.lobby` (LAN table picker, rules in
  words), :mod:`~p2p_chinchon.i18n` (English, Spanish, French),
  :mod:`~p2p_chinchon.ui.logtext` (the table's move log translated, the own seat as "you").

Nothing here holds a rule of the game: the table checks every intent with the engine.
Submodules are imported on demand so that ``import p2p_chinchon.ui`` stays cheap.
"""
