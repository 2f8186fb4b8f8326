import pytest


def test_count_vowels_empty():
    from textops import count_vowels
    assert count_vowels("") == 0


def test_count_vowels_plain_word():
    from textops import count_vowels
    assert count_vowels("Apple") == 2


def test_count_vowels_y_at_end():
    from textops import count_vowels
    assert count_vowels("sky") == 1


def test_count_vowels_y_at_start():
    from textops import count_vowels
    assert count_vowels("yes") == 1


def test_count_vowels_y_before_space():
    from textops import count_vowels
    assert count_vowels("happy day") == 4


def test_count_vowels_no_vowels():
    from textops import count_vowels
    assert count_vowels("xyz") == 0


def test_count_vowels_y_before_comma():
    from textops import count_vowels
    assert count_vowels("my, oh") == 2


def test_title_words_two_words():
    from textops import title_words
    assert title_words("hello world") == "Hello World"


def test_title_words_empty():
    from textops import title_words
    assert title_words("") == ""


def test_title_words_double_space():
    from textops import title_words
    assert title_words("a  b") == "A  B"


def test_title_words_mixed_case():
    from textops import title_words
    assert title_words("mIxEd CaSe") == "Mixed Case"


def test_title_words_single_char():
    from textops import title_words
    assert title_words("x") == "X"


def test_title_words_two_letters():
    from textops import title_words
    assert title_words("aB") == "Ab"


def test_run_length_encode_empty():
    from textops import run_length_encode
    assert run_length_encode("") == ""


def test_run_length_encode_single_char():
    from textops import run_length_encode
    assert run_length_encode("a") == "a"


def test_run_length_encode_mixed_runs():
    from textops import run_length_encode
    assert run_length_encode("aaabcc") == "a3bc2"


def test_run_length_encode_no_runs():
    from textops import run_length_encode
    assert run_length_encode("abc") == "abc"


def test_run_length_encode_one_run():
    from textops import run_length_encode
    assert run_length_encode("zzzz") == "z4"


def test_run_length_encode_two_pairs():
    from textops import run_length_encode
    assert run_length_encode("aabb") == "a2b2"


def test_is_palindrome_empty():
    from textops import is_palindrome
    assert is_palindrome("") == True


def test_is_palindrome_single_char():
    from textops import is_palindrome
    assert is_palindrome("a") == True


def test_is_palindrome_mixed_case():
    from textops import is_palindrome
    assert is_palindrome("Racecar") == True


def test_is_palindrome_sentence():
    from textops import is_palindrome
    assert is_palindrome("A man, a plan, a canal: Panama") == True


def test_is_palindrome_two_different():
    from textops import is_palindrome
    assert is_palindrome("ab") == False


def test_is_palindrome_near_miss():
    from textops import is_palindrome
    assert is_palindrome("abca") == False


def test_is_palindrome_even_length():
    from textops import is_palindrome
    assert is_palindrome("abba") == True


def test_caesar_shift_by_one():
    from textops import caesar_shift
    assert caesar_shift("abc", 1) == "bcd"


def test_caesar_shift_wraps():
    from textops import caesar_shift
    assert caesar_shift("xyz", 3) == "abc"


def test_caesar_shift_rot13():
    from textops import caesar_shift
    assert caesar_shift("Hello, World!", 13) == "Uryyb, Jbeyq!"


def test_caesar_shift_negative():
    from textops import caesar_shift
    assert caesar_shift("abc", -1) == "zab"


def test_caesar_shift_empty():
    from textops import caesar_shift
    assert caesar_shift("", 5) == ""


def test_caesar_shift_uppercase_wrap():
    from textops import caesar_shift
    assert caesar_shift("Zz", 1) == "Aa"


def test_caesar_shift_zero_shift():
    from textops import caesar_shift
    assert caesar_shift("az", 0) == "az"


def test_caesar_shift_uppercase_ends():
    from textops import caesar_shift
    assert caesar_shift("AZ", 2) == "CB"


def test_longest_word_empty():
    from textops import longest_word
    assert longest_word("") == ""


def test_longest_word_increasing():
    from textops import longest_word
    assert longest_word("a bb ccc") == "ccc"


def test_longest_word_tie():
    from textops import longest_word
    assert longest_word("one two six") == "one"


def test_longest_word_single():
    from textops import longest_word
    assert longest_word("hello") == "hello"


def test_longest_word_middle():
    from textops import longest_word
    assert longest_word("ab cde fg") == "cde"


def test_longest_word_extra_spaces():
    from textops import longest_word
    assert longest_word("  hi   there ") == "there"


def test_count_occurrences_overlapping():
    from textops import count_occurrences
    assert count_occurrences("aaaa", "aa") == 3


def test_count_occurrences_repeated():
    from textops import count_occurrences
    assert count_occurrences("abcabc", "abc") == 2


def test_count_occurrences_empty_sub():
    from textops import count_occurrences
    assert count_occurrences("abc", "") == 0


def test_count_occurrences_longer_sub():
    from textops import count_occurrences
    assert count_occurrences("ab", "abc") == 0


def test_count_occurrences_single_letter():
    from textops import count_occurrences
    assert count_occurrences("hello", "l") == 2


def test_count_occurrences_whole_text():
    from textops import count_occurrences
    assert count_occurrences("abc", "abc") == 1


def test_count_occurrences_at_end():
    from textops import count_occurrences
    assert count_occurrences("xxab", "ab") == 1


def test_acronym_basic():
    from textops import acronym
    assert acronym("Portable Network Graphics") == "PNG"


def test_acronym_skips_of():
    from textops import acronym
    assert acronym("Bank of America") == "BA"


def test_acronym_leading_the():
    from textops import acronym
    assert acronym("The Lord of the Rings") == "TLR"


def test_acronym_hyphen():
    from textops import acronym
    assert acronym("complementary metal-oxide semiconductor") == "CMOS"


def test_acronym_empty():
    from textops import acronym
    assert acronym("") == ""


def test_acronym_skips_and():
    from textops import acronym
    assert acronym("Rock and Roll") == "RR"


def test_pad_center_even_gap():
    from textops import pad_center
    assert pad_center("ab", 6) == "**ab**"


def test_pad_center_odd_gap():
    from textops import pad_center
    assert pad_center("ab", 5) == "*ab**"


def test_pad_center_exact_width():
    from textops import pad_center
    assert pad_center("abc", 3) == "abc"


def test_pad_center_too_long():
    from textops import pad_center
    assert pad_center("abcd", 2) == "abcd"


def test_pad_center_custom_fill():
    from textops import pad_center
    assert pad_center("x", 4, "-") == "-x--"


def test_pad_center_empty_text():
    from textops import pad_center
    assert pad_center("", 2) == "**"


def test_pad_center_one_gap():
    from textops import pad_center
    assert pad_center("ab", 3) == "ab*"


def test_mask_middle_basic():
    from textops import mask_middle
    assert mask_middle("abcdef", 2) == "ab##ef"


def test_mask_middle_exact_length():
    from textops import mask_middle
    assert mask_middle("abcd", 2) == "abcd"


def test_mask_middle_one_hidden():
    from textops import mask_middle
    assert mask_middle("abcde", 2) == "ab#de"


def test_mask_middle_keep_one():
    from textops import mask_middle
    assert mask_middle("secret", 1) == "s####t"


def test_mask_middle_empty():
    from textops import mask_middle
    assert mask_middle("", 3) == ""


def test_mask_middle_keep_zero():
    from textops import mask_middle
    assert mask_middle("abc", 0) == "###"


def test_mask_middle_default_keep():
    from textops import mask_middle
    assert mask_middle("abcdefg") == "ab###fg"


def test_mask_middle_keep_one_short():
    from textops import mask_middle
    assert mask_middle("abc", 1) == "a#c"


def test_mask_middle_shorter_than_both_ends():
    from textops import mask_middle
    assert mask_middle("abc", 2) == "abc"


@pytest.mark.parametrize(
    "text, expected",
    [("", ""), ("two words", "Two Words"), ("Already Titled", "Already Titled")],
    ids=["empty string", "two words", "already titled"],
)
def test_title_words_table(text, expected):
    from textops import title_words
    assert title_words(text) == expected


class TestLongestWordEdges:
    def test_longest_word_tie(self):
        from textops import longest_word
        assert longest_word("aa bb c") == "aa"

    def test_longest_word_last_is_longest(self):
        from textops import longest_word
        assert longest_word("a bb ccc dddd") == "dddd"
