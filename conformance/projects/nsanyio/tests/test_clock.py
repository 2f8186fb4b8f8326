import acme
import anyio
import pytest

from acme.clock import countdown, stretch


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.anyio
async def test_countdown():
    assert await countdown(3) == [3, 2, 1]


@pytest.mark.anyio
async def test_countdown_in_task_group():
    results = []

    async def run(n):
        results.append(await countdown(n))

    async with anyio.create_task_group() as tg:
        tg.start_soon(run, 2)
        tg.start_soon(run, 1)
    assert sorted(results) == [[1], [2, 1]]


@pytest.mark.anyio
async def test_zero():
    assert await countdown(0) == []


def test_stretch():
    assert stretch([1, 2], 3) == [3, 6]


def test_namespace_package_has_no_file():
    assert getattr(acme, "__file__", None) is None
    assert list(acme.__path__) == ["/testbed/src/acme"]
