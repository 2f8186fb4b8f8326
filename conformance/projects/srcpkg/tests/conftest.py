import pytest

EVENTS = []


def pytest_collection_modifyitems(config, items):
    """A conftest hook: tests whose name says 'slow' get a marker, and items run sorted."""
    for item in items:
        if "slow" in item.name:
            item.add_marker(pytest.mark.slowish)


@pytest.fixture(scope="module")
def module_log():
    EVENTS.append("module-setup")
    yield EVENTS
    EVENTS.append("module-teardown")


@pytest.fixture
def words():
    return ["a", "b", "a"]
