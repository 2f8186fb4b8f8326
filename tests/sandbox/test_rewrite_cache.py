"""The warm server's cache of pytest's assertion rewriting gives a test process what pytest's
own ``_rewrite_test`` would: the same kind of first value (the file's stat before pytest 9.2,
the source's hash from it) and code that behaves alike under the test's own file name."""

from __future__ import annotations

import types

import pytest
from _pytest.assertion import rewrite
from guestfactory import guest_module

SOURCE = "def test_sum():\n    total = 1 + 1\n    assert total == 3\n"


@pytest.fixture
def cache():
    original = rewrite._rewrite_test
    try:
        yield guest_module("rewrite_cache")
    finally:
        rewrite._rewrite_test = original


def _failure(code: types.CodeType) -> str:
    namespace: dict = {}
    exec(code, namespace)
    with pytest.raises(AssertionError) as caught:
        namespace["test_sum"]()
    return str(caught.value)


def test_a_cached_rewrite_is_what_pytest_would_return(cache, tmp_path):
    assert cache.SUPPORTED
    seen, copy = tmp_path / "seen" / "test_sum.py", tmp_path / "copy" / "test_sum.py"
    for path in (seen, copy):
        path.parent.mkdir()
        path.write_text(SOURCE)
    cache.prewarm([str(seen)])
    first, code = rewrite._rewrite_test(copy, None)  # the cached path, another file's name
    own_first, own_code = cache._ORIGINAL(copy, None)
    assert type(first) is type(own_first)
    if isinstance(own_first, bytes):
        assert first == own_first  # the source's hash
    assert code.co_filename == own_code.co_filename == str(copy)
    assert _failure(code) == _failure(own_code)
    assert "assert 2 == 3" in _failure(code)  # rewritten: the values are shown


def test_a_file_never_seen_takes_pytests_own_path(cache, tmp_path):
    path = tmp_path / "test_sum.py"
    path.write_text(SOURCE)
    calls = []
    cache._ORIGINAL, original = (
        (lambda fn, config: calls.append(fn) or original(fn, config)),
        (cache._ORIGINAL),
    )
    rewrite._rewrite_test(path, None)
    assert calls == [path]
