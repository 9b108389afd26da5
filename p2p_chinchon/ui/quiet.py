"""Nothing but the full-screen UI writes to the terminal while it runs.

A log line printed over a prompt_toolkit screen shifts its rows until the next full repaint
(a seat list then shows one player's fingerprint beside another's name). While the table is
on screen, :func:`quiet_terminal`:

- sends every log record (the root logger's, and Python's "last resort" warnings that reach
  stderr when no handler is set) to a log file instead;
- points file descriptor 2 at that file too, so that whatever else writes to stderr (a worker
  thread, a C library, ``warnings``, a stray ``print(file=sys.stderr)``) lands there;
- hands the person the records that matter to them through ``notice`` (one short line for
  the status line, e.g. a refused connection), never the raw log text.

Everything is put back as it was when the UI ends, so the command's last lines (the result,
an error) reach the terminal.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

LOG_NAME = "p2p-chinchon.log"
MAX_LOG = 1 << 20  # bytes: a log file longer than this is started afresh (its tail kept as .1)


def log_path() -> Path:
    """Where the full-screen UI's log goes: ``<data folder>/p2p-chinchon.log``."""
    import platformdirs

    return Path(platformdirs.user_data_dir("p2p-chinchon", appauthor=False)) / LOG_NAME


class _Notify(logging.Handler):
    """Passes WARNING records of the network layer to ``notice`` as one line."""

    def __init__(self, notice: Callable[[logging.LogRecord], None]) -> None:
        super().__init__(logging.WARNING)
        self.notice = notice

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("p2p_chinchon.net"):
            try:
                self.notice(record)
            except Exception:  # noqa: BLE001 - a notice must never break the node
                pass


@contextlib.contextmanager
def quiet_terminal(path: Path | None = None,
                   notice: Callable[[logging.LogRecord], None] | None = None) -> Iterator[Path | None]:
    """Keep the terminal for the UI alone while the ``with`` block runs; yields the log file's
    path (None when it could not be opened: records and stderr are then dropped, never
    printed). ``path``: the log file (default :func:`log_path`); ``notice(record)``: called for
    each WARNING or worse of ``p2p_chinchon.net.*`` (the caller words it for the person)."""
    path = path or log_path()
    stream = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > MAX_LOG:
            path.replace(path.with_name(path.name + ".1"))
        stream = open(path, "a", buffering=1, encoding="utf-8", errors="replace")
    except OSError:
        path = None
    target = stream if stream is not None else open(os.devnull, "w")
    root = logging.getLogger()
    saved_handlers = list(root.handlers)
    saved_level = root.level
    saved_last = logging.lastResort
    file_handler = logging.StreamHandler(target)
    file_handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(name)s %(levelname)s %(message)s"))
    # the handlers that write to the terminal go (P2P_CHINCHON_LOG's stderr handler); others stay
    keep = [h for h in saved_handlers if not _on_terminal(h)]
    root.handlers = keep + [file_handler]
    if not saved_handlers:
        root.setLevel(logging.INFO)
    logging.lastResort = None
    notify = _Notify(notice) if notice is not None else None
    if notify is not None:
        root.addHandler(notify)
    saved_fd = None
    saved_stderr = sys.stderr
    try:
        sys.stderr.flush()
        saved_fd = os.dup(2)
        os.dup2(target.fileno(), 2)
    except (OSError, ValueError):
        saved_fd = None
    sys.stderr = target
    try:
        yield path
    finally:
        sys.stderr = saved_stderr
        with contextlib.suppress(OSError, ValueError):
            target.flush()
        if saved_fd is not None:
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
        root.handlers = saved_handlers
        root.setLevel(saved_level)
        logging.lastResort = saved_last
        target.close()


def _on_terminal(handler: logging.Handler) -> bool:
    stream = getattr(handler, "stream", None)
    if stream is None or isinstance(handler, logging.FileHandler):
        return False
    try:
        return stream.fileno() in (1, 2) or stream.isatty()
    except (OSError, ValueError, AttributeError):
        return False
