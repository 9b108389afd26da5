"""The network around the sans-I/O table: length-prefixed framing, the seats' full mesh (trio,
TLS 1.3), the pre-seating lobby link, mDNS table discovery and code words; the node that drives
a seated table (``node.py``) and its sans-I/O machines (``presence.py``, ``clocks.py``,
``verdicts.py``, the host lobby's ``admission.py``). Links carry opaque ``bytes``: message
meaning, order and signatures live in ``wire.py`` and ``table/``.
"""
