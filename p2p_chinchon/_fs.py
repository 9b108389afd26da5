"""Small file-system helpers shared by the identity key and the transcript writer."""

from __future__ import annotations

import os
from pathlib import Path


def fsync_dir(folder: Path) -> None:
    """Make a new directory entry durable (after creating or renaming a file in ``folder``)."""
    try:
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:  # some filesystems refuse fsync on directories
        pass
    finally:
        os.close(dfd)
