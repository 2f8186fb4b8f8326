"""The code under test."""

import asyncio


async def gather_doubled(values):
    async def double(v):
        await asyncio.sleep(0)
        return v * 2

    return list(await asyncio.gather(*(double(v) for v in values)))


def encode(text):
    """Run-length encode a string: 'aab' -> [('a', 2), ('b', 1)]."""
    out = []
    for ch in text:
        if out and out[-1][0] == ch:
            out[-1] = (ch, out[-1][1] + 1)
        else:
            out.append((ch, 1))
    return out


def decode(pairs):
    return "".join(ch * n for ch, n in pairs)
