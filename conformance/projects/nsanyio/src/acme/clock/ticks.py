"""The code under test."""

import anyio


async def countdown(n):
    """The numbers n, n-1, ..., 1, yielding to the event loop between them."""
    out = []
    while n > 0:
        await anyio.sleep(0)
        out.append(n)
        n -= 1
    return out


def stretch(values, factor):
    """Every value multiplied by factor."""
    return [v * factor for v in values]
