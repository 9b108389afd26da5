"""Bots: strategies that choose a move from what one seat may know."""

from .simple import SimpleBot

__all__ = ["SimpleBot"]
