"""p2p-chinchon: Chinchón between peers on a LAN, with a mental-poker deck and no trusted dealer."""

__version__ = "0.1.0"
PROTOCOL_VERSION = 3
