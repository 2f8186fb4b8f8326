import pytest


def test_popcount_zero():
    from bitwise_kit import popcount
    assert popcount(0) == 0


def test_popcount_one():
    from bitwise_kit import popcount
    assert popcount(1) == 1


def test_popcount_seven():
    from bitwise_kit import popcount
    assert popcount(7) == 3


def test_popcount_eight():
    from bitwise_kit import popcount
    assert popcount(8) == 1


def test_popcount_byte():
    from bitwise_kit import popcount
    assert popcount(255) == 8


def test_popcount_ten():
    from bitwise_kit import popcount
    assert popcount(10) == 2


def test_is_power_of_two_zero():
    from bitwise_kit import is_power_of_two
    assert is_power_of_two(0) == False


def test_is_power_of_two_one():
    from bitwise_kit import is_power_of_two
    assert is_power_of_two(1) == True


def test_is_power_of_two_two():
    from bitwise_kit import is_power_of_two
    assert is_power_of_two(2) == True


def test_is_power_of_two_three():
    from bitwise_kit import is_power_of_two
    assert is_power_of_two(3) == False


def test_is_power_of_two_six():
    from bitwise_kit import is_power_of_two
    assert is_power_of_two(6) == False


def test_is_power_of_two_sixty_four():
    from bitwise_kit import is_power_of_two
    assert is_power_of_two(64) == True


def test_is_power_of_two_negative():
    from bitwise_kit import is_power_of_two
    assert is_power_of_two(-4) == False


def test_write_bit_set_lowest():
    from bitwise_kit import write_bit
    assert write_bit(0, 0, True) == 1


def test_write_bit_set_high():
    from bitwise_kit import write_bit
    assert write_bit(0, 3, True) == 8


def test_write_bit_clear():
    from bitwise_kit import write_bit
    assert write_bit(15, 1, False) == 13


def test_write_bit_clear_only_bit():
    from bitwise_kit import write_bit
    assert write_bit(8, 3, False) == 0


def test_write_bit_set_existing():
    from bitwise_kit import write_bit
    assert write_bit(5, 0, True) == 5


def test_write_bit_clear_absent():
    from bitwise_kit import write_bit
    assert write_bit(4, 0, False) == 4


def test_bits_needed_zero():
    from bitwise_kit import bits_needed
    assert bits_needed(0) == 1


def test_bits_needed_one():
    from bitwise_kit import bits_needed
    assert bits_needed(1) == 1


def test_bits_needed_two():
    from bitwise_kit import bits_needed
    assert bits_needed(2) == 2


def test_bits_needed_seven():
    from bitwise_kit import bits_needed
    assert bits_needed(7) == 3


def test_bits_needed_eight():
    from bitwise_kit import bits_needed
    assert bits_needed(8) == 4


def test_bits_needed_byte():
    from bitwise_kit import bits_needed
    assert bits_needed(255) == 8


def test_bits_needed_just_over_byte():
    from bitwise_kit import bits_needed
    assert bits_needed(256) == 9


def test_reverse_bits_one_in_four():
    from bitwise_kit import reverse_bits
    assert reverse_bits(1, 4) == 8


def test_reverse_bits_six_in_three():
    from bitwise_kit import reverse_bits
    assert reverse_bits(6, 3) == 3


def test_reverse_bits_zero():
    from bitwise_kit import reverse_bits
    assert reverse_bits(0, 8) == 0


def test_reverse_bits_eleven_in_four():
    from bitwise_kit import reverse_bits
    assert reverse_bits(11, 4) == 13


def test_reverse_bits_width_one():
    from bitwise_kit import reverse_bits
    assert reverse_bits(1, 1) == 1


def test_reverse_bits_symmetric():
    from bitwise_kit import reverse_bits
    assert reverse_bits(5, 3) == 5


def test_reverse_bits_truncates():
    from bitwise_kit import reverse_bits
    assert reverse_bits(6, 2) == 1


def test_gray_code_zero():
    from bitwise_kit import gray_code
    assert gray_code(0) == 0


def test_gray_code_one():
    from bitwise_kit import gray_code
    assert gray_code(1) == 1


def test_gray_code_two():
    from bitwise_kit import gray_code
    assert gray_code(2) == 3


def test_gray_code_three():
    from bitwise_kit import gray_code
    assert gray_code(3) == 2


def test_gray_code_four():
    from bitwise_kit import gray_code
    assert gray_code(4) == 6


def test_gray_code_seven():
    from bitwise_kit import gray_code
    assert gray_code(7) == 4


def test_gray_code_negative():
    from bitwise_kit import gray_code
    with pytest.raises(ValueError):
        gray_code(-1)


def test_from_gray_zero():
    from bitwise_kit import from_gray
    assert from_gray(0) == 0


def test_from_gray_one():
    from bitwise_kit import from_gray
    assert from_gray(1) == 1


def test_from_gray_three():
    from bitwise_kit import from_gray
    assert from_gray(3) == 2


def test_from_gray_two():
    from bitwise_kit import from_gray
    assert from_gray(2) == 3


def test_from_gray_six():
    from bitwise_kit import from_gray
    assert from_gray(6) == 4


def test_from_gray_four():
    from bitwise_kit import from_gray
    assert from_gray(4) == 7


def test_lowest_set_index_zero():
    from bitwise_kit import lowest_set_index
    assert lowest_set_index(0) == -1


def test_lowest_set_index_one():
    from bitwise_kit import lowest_set_index
    assert lowest_set_index(1) == 0


def test_lowest_set_index_eight():
    from bitwise_kit import lowest_set_index
    assert lowest_set_index(8) == 3


def test_lowest_set_index_twelve():
    from bitwise_kit import lowest_set_index
    assert lowest_set_index(12) == 2


def test_lowest_set_index_seven():
    from bitwise_kit import lowest_set_index
    assert lowest_set_index(7) == 0


def test_lowest_set_index_ninety_six():
    from bitwise_kit import lowest_set_index
    assert lowest_set_index(96) == 5


def test_pack_rgb_black():
    from bitwise_kit import pack_rgb
    assert pack_rgb(0, 0, 0) == 0


def test_pack_rgb_white():
    from bitwise_kit import pack_rgb
    assert pack_rgb(255, 255, 255) == 16777215


def test_pack_rgb_small_values():
    from bitwise_kit import pack_rgb
    assert pack_rgb(1, 2, 3) == 66051


def test_pack_rgb_clamped():
    from bitwise_kit import pack_rgb
    assert pack_rgb(300, -5, 16) == 16711696


def test_pack_rgb_green():
    from bitwise_kit import pack_rgb
    assert pack_rgb(0, 255, 0) == 65280


def test_pack_rgb_just_over():
    from bitwise_kit import pack_rgb
    assert pack_rgb(256, 0, 0) == 16711680


def test_pack_rgb_minus_one():
    from bitwise_kit import pack_rgb
    assert pack_rgb(-1, 0, 0) == 0


def test_unpack_rgb_zero():
    from bitwise_kit import unpack_rgb
    assert unpack_rgb(0) == (0, 0, 0)


def test_unpack_rgb_white():
    from bitwise_kit import unpack_rgb
    assert unpack_rgb(16777215) == (255, 255, 255)


def test_unpack_rgb_small_values():
    from bitwise_kit import unpack_rgb
    assert unpack_rgb(66051) == (1, 2, 3)


def test_unpack_rgb_red():
    from bitwise_kit import unpack_rgb
    assert unpack_rgb(16711680) == (255, 0, 0)


def test_unpack_rgb_green():
    from bitwise_kit import unpack_rgb
    assert unpack_rgb(65280) == (0, 255, 0)


def test_unpack_rgb_green_one():
    from bitwise_kit import unpack_rgb
    assert unpack_rgb(256) == (0, 1, 0)


def test_hamming_distance_both_zero():
    from bitwise_kit import hamming_distance
    assert hamming_distance(0, 0) == 0


def test_hamming_distance_two_bits():
    from bitwise_kit import hamming_distance
    assert hamming_distance(1, 4) == 2


def test_hamming_distance_three_bits():
    from bitwise_kit import hamming_distance
    assert hamming_distance(7, 0) == 3


def test_hamming_distance_equal():
    from bitwise_kit import hamming_distance
    assert hamming_distance(15, 15) == 0


def test_hamming_distance_one_bit():
    from bitwise_kit import hamming_distance
    assert hamming_distance(8, 9) == 1


def test_hamming_distance_byte():
    from bitwise_kit import hamming_distance
    assert hamming_distance(255, 0) == 8


@pytest.mark.parametrize(
    "n, expected",
    [(0, 0), (255, 8), (1024, 1)],
    ids=["zero value", "all ones byte", "single high bit"],
)
def test_popcount_table(n, expected):
    from bitwise_kit import popcount
    assert popcount(n) == expected
