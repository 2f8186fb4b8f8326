import asyncio

import pytest

from asyncprop.core import gather_doubled


async def test_gather_doubled():
    assert await gather_doubled([1, 2, 3]) == [2, 4, 6]


async def test_gather_empty():
    assert await gather_doubled([]) == []


@pytest.mark.asyncio
async def test_marked_explicitly():
    await asyncio.sleep(0)
    assert await gather_doubled([5]) == [10]


@pytest.fixture
async def numbers():
    await asyncio.sleep(0)
    return [4, 5]


async def test_async_fixture(numbers):
    assert await gather_doubled(numbers) == [8, 10]


def test_sync_beside():
    assert asyncio.run(gather_doubled([0])) == [0]
