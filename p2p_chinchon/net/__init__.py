"""Networking (trio): length-prefixed framing, the seats' full mesh, the pre-seating lobby link
and mDNS table discovery. Everything here carries opaque ``bytes``; message meaning, ordering
and signatures of table messages live in ``wire.py`` / ``table.py``; ``net/node.py`` drives it.
"""
