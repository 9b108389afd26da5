"""The libsodium the deck calls: the one the ``rbcl`` package bundles, without its start-up cost.

Importing rbcl decodes its bundled libsodium (a 5.6 MB hex string of Python source), writes it
to a new temporary file and loads it, and imports ``doctest`` and rewrites its own functions:
50-120 ms of CPU in every process of a game. The first process to need the library here goes
through rbcl as before and keeps a copy of the very bytes rbcl loaded in the user's cache
folder, named after rbcl's source file (its size and time: another rbcl makes another copy);
later processes load that copy directly. A copy is loaded only if it is a regular file owned
by this user, in a folder that only this user may write (the identity key's rule); otherwise,
and on systems without POSIX modes, rbcl as before. No function here computes anything:
every group operation is libsodium's (``group.py``).
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

CACHE_ENV = "P2P_CHINCHON_SODIUM_CACHE"  # a folder for the copy; "" turns the copy off (tests)


def _rbcl_source() -> Path | None:
    """rbcl's ``_sodium.py`` (the bundled library's source), found without importing rbcl."""
    spec = importlib.util.find_spec("rbcl")
    places = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(places[0]) / "_sodium.py" if places else None


def _cache_dir() -> Path | None:
    folder = os.environ.get(CACHE_ENV)
    if folder is not None:
        return Path(folder) if folder else None
    import platformdirs

    return Path(platformdirs.user_cache_dir("p2p-chinchon", appauthor=False))


def _copy_path() -> Path | None:
    if os.name != "posix":
        return None
    source, folder = _rbcl_source(), _cache_dir()
    if source is None or folder is None:
        return None
    try:
        st = source.stat()
    except OSError:
        return None
    return folder / f"libsodium-rbcl-{st.st_size}-{st.st_mtime_ns}.so"


def _private(path: Path, folder: bool) -> bool:
    """A file (or folder) of this user that nobody else may write."""
    try:
        st = path.lstat()
    except OSError:
        return False
    kind = stat.S_ISDIR if folder else stat.S_ISREG
    return kind(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def _usable(copy: Path) -> bool:
    return _private(copy.parent, folder=True) and _private(copy, folder=False)


def _keep_copy(copy: Path, data: bytes) -> None:
    """Write rbcl's library bytes to ``copy`` whole or not at all (a temporary name, renamed)."""
    try:
        copy.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(copy.parent, folder=True):
            return
        fd, tmp = tempfile.mkstemp(dir=copy.parent, prefix=".libsodium-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(tmp, 0o500)
            os.replace(tmp, copy)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _prune(copy.parent)
    except OSError:
        pass  # no copy: the next process goes through rbcl again


KEPT_COPIES = 3  # one per rbcl install in use (each venv's is named after its own file)


def _prune(folder: Path) -> None:
    """Keep the ``KEPT_COPIES`` newest copies: every new install made another, never removed."""
    try:
        copies = sorted(folder.glob("libsodium-rbcl-*.so"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in copies[KEPT_COPIES:]:
            old.unlink()  # a process that loaded it keeps its mapping (POSIX)
    except OSError:
        pass  # another process pruned first


def remove_extracted_library() -> None:
    """Remove the file ``import rbcl`` left: rbcl writes its bundled libsodium to a new
    temporary file at every import and leaves it there (2.8 MB in the temporary folder per
    process started). Once loaded, the library no longer needs its file on POSIX systems;
    Windows keeps a loaded file locked (left as is). :func:`load` calls it whichever way it
    loads, so an ``import rbcl`` before the deck's leaves nothing either."""
    path = getattr(sys.modules.get("rbcl._sodium"), "lib_path", None)
    # only rbcl's own temporary copy: never a library that lives anywhere else
    if (isinstance(path, str) and os.name == "posix" and path.endswith(".so")
            and os.path.dirname(os.path.abspath(path)) == os.path.abspath(tempfile.gettempdir())
            and os.path.basename(path).startswith("tmp")):
        try:
            os.unlink(path)
        except OSError:
            pass  # already gone, or not ours to remove


def _through_rbcl(copy: Path | None) -> Any:
    import rbcl  # noqa: F401  (loads and initialises the library)

    module = sys.modules["rbcl._sodium"]
    if copy is not None and isinstance(getattr(module, "sodium_bs", None), bytes):
        _keep_copy(copy, module.sodium_bs)
    remove_extracted_library()
    return module._sodium


_LIBRARY: Any = None


def library() -> Any:
    """:func:`load`, once per process (the deck's group operations and the envelope
    signatures share one library)."""
    global _LIBRARY
    if _LIBRARY is None:
        _LIBRARY = load()
    return _LIBRARY


def load() -> Any:
    """libsodium (a ``ctypes.CDLL``), initialised. Raises RuntimeError if it cannot start."""
    copy = _copy_path()
    lib = None
    if copy is not None and _usable(copy):
        try:
            lib = ctypes.CDLL(str(copy))
        except OSError:
            lib = None  # a damaged copy: rbcl again, which writes a new one
    if lib is None:
        lib = _through_rbcl(copy)
    else:
        remove_extracted_library()  # rbcl's own file, if something imported rbcl before us
    if lib.sodium_init() < 0:
        raise RuntimeError("libsodium could not initialise")
    return lib
