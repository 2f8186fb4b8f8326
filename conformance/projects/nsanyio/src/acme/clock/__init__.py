"""``acme`` is a namespace package (no ``acme/__init__.py``), installed in development mode
from ``src``; ``acme.clock`` is its one regular package."""

from acme.clock.ticks import countdown, stretch

__all__ = ["countdown", "stretch"]
