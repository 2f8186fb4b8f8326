"""A src-layout package, installed in development mode (a .pth names /testbed/src)."""

from srcpkg.core import clamp, slug, tally

__all__ = ["clamp", "slug", "tally"]
