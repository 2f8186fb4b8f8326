from hypothesis import given, settings
from hypothesis import strategies as st

from asyncprop.core import decode, encode


@settings(max_examples=50, deadline=None, database=None)
@given(st.text(alphabet="abc", max_size=20))
def test_roundtrip(text):
    assert decode(encode(text)) == text


@settings(max_examples=50, deadline=None, database=None)
@given(st.text(alphabet="ab", min_size=1, max_size=20))
def test_runs_are_maximal(text):
    pairs = encode(text)
    assert all(a[0] != b[0] for a, b in zip(pairs, pairs[1:]))


def test_example():
    assert encode("aab") == [("a", 2), ("b", 1)]
