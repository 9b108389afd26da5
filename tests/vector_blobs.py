"""The blob encoding of protocol/vectors (protocol/README.md): ``hex:...`` or ``zlib64:...``.

Standard library only, so the checkers written from docs/protocol.md alone
(test_protocol_doc, test_tw_spec) can read vectors without importing p2p_chinchon's deck.
"""

from __future__ import annotations

import base64
import zlib


def unblob(text: str) -> bytes:
    """Bytes of a vector blob; ValueError for an unknown encoding."""
    kind, _, payload = text.partition(":")
    if kind == "hex":
        return bytes.fromhex(payload)
    if kind == "zlib64":
        return zlib.decompress(base64.b64decode(payload))
    raise ValueError(f"unknown blob encoding {kind!r}")
