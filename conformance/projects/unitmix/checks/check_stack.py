import unittest

import pytest

from unitmix.stack import Stack, parse_int


class StackTests(unittest.TestCase):
    """unittest.TestCase classes collected by pytest (any class name)."""

    @classmethod
    def setUpClass(cls):
        cls.shared = [1, 2, 3]

    def setUp(self):
        self.stack = Stack()

    def test_push_pop(self):
        self.stack.push(1)
        self.stack.push(2)
        self.assertEqual(self.stack.pop(), 2)
        self.assertEqual(len(self.stack), 1)

    def test_pop_empty(self):
        with self.assertRaises(IndexError):
            self.stack.pop()

    def test_peek(self):
        for item in self.shared:
            self.stack.push(item)
        self.assertEqual(self.stack.peek(), 3)

    def test_parse_subtests(self):
        for text, value in [("1", 1), (" 2 ", 2), ("-3", -3)]:
            with self.subTest(text=text):
                self.assertEqual(parse_int(text), value)

    @unittest.skip("documents a unittest skip")
    def test_skipped(self):
        self.fail("never runs")

    @unittest.expectedFailure
    def test_expected_failure(self):
        self.assertEqual(parse_int("x"), 0)


class CheckPlain:
    """A plain class collected by the python_classes / python_functions configuration."""

    def check_len(self):
        stack = Stack()
        stack.push("a")
        assert len(stack) == 1


def check_parse_plain():
    assert parse_int("+7") == 7


def test_not_collected_by_config():
    raise AssertionError("python_functions = check_* leaves this out")


@pytest.fixture(scope="module")
def filled():
    stack = Stack()
    for i in range(3):
        stack.push(i)
    return stack


def check_module_fixture(filled):
    assert filled.peek() == 2
