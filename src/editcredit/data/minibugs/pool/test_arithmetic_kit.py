import pytest


def test_clamp_below_lower():
    from arithmetic_kit import clamp
    assert clamp(-2, 0, 3) == 0


def test_clamp_above_upper():
    from arithmetic_kit import clamp
    assert clamp(5, 0, 3) == 3


def test_clamp_inside():
    from arithmetic_kit import clamp
    assert clamp(2, 0, 10) == 2


def test_clamp_at_lower():
    from arithmetic_kit import clamp
    assert clamp(0, 0, 3) == 0


def test_clamp_at_upper():
    from arithmetic_kit import clamp
    assert clamp(3, 0, 3) == 3


def test_clamp_negative_range():
    from arithmetic_kit import clamp
    assert clamp(-7, -5, -1) == -5


def test_digit_sum_zero():
    from arithmetic_kit import digit_sum
    assert digit_sum(0) == 0


def test_digit_sum_single_digit():
    from arithmetic_kit import digit_sum
    assert digit_sum(7) == 7


def test_digit_sum_several_digits():
    from arithmetic_kit import digit_sum
    assert digit_sum(1234) == 10


def test_digit_sum_negative():
    from arithmetic_kit import digit_sum
    assert digit_sum(-905) == 14


def test_digit_sum_ten():
    from arithmetic_kit import digit_sum
    assert digit_sum(10) == 1


def test_digit_sum_nines():
    from arithmetic_kit import digit_sum
    assert digit_sum(999) == 27


def test_greatest_divisor_common_factor():
    from arithmetic_kit import greatest_divisor
    assert greatest_divisor(12, 18) == 6


def test_greatest_divisor_coprime():
    from arithmetic_kit import greatest_divisor
    assert greatest_divisor(17, 5) == 1


def test_greatest_divisor_zero_first():
    from arithmetic_kit import greatest_divisor
    assert greatest_divisor(0, 9) == 9


def test_greatest_divisor_zero_second():
    from arithmetic_kit import greatest_divisor
    assert greatest_divisor(9, 0) == 9


def test_greatest_divisor_negative():
    from arithmetic_kit import greatest_divisor
    assert greatest_divisor(-24, 36) == 12


def test_greatest_divisor_equal():
    from arithmetic_kit import greatest_divisor
    assert greatest_divisor(7, 7) == 7


def test_greatest_divisor_negative_second():
    from arithmetic_kit import greatest_divisor
    assert greatest_divisor(24, -36) == 12


def test_is_prime_zero():
    from arithmetic_kit import is_prime
    assert is_prime(0) == False


def test_is_prime_one():
    from arithmetic_kit import is_prime
    assert is_prime(1) == False


def test_is_prime_two():
    from arithmetic_kit import is_prime
    assert is_prime(2) == True


def test_is_prime_three():
    from arithmetic_kit import is_prime
    assert is_prime(3) == True


def test_is_prime_four():
    from arithmetic_kit import is_prime
    assert is_prime(4) == False


def test_is_prime_nine():
    from arithmetic_kit import is_prime
    assert is_prime(9) == False


def test_is_prime_twenty_five():
    from arithmetic_kit import is_prime
    assert is_prime(25) == False


def test_is_prime_twenty_nine():
    from arithmetic_kit import is_prime
    assert is_prime(29) == True


def test_is_prime_negative():
    from arithmetic_kit import is_prime
    assert is_prime(-7) == False


def test_sum_of_multiples_classic():
    from arithmetic_kit import sum_of_multiples
    assert sum_of_multiples(10, 3, 5) == 23


def test_sum_of_multiples_limit_one():
    from arithmetic_kit import sum_of_multiples
    assert sum_of_multiples(1, 3, 5) == 0


def test_sum_of_multiples_limit_excluded():
    from arithmetic_kit import sum_of_multiples
    assert sum_of_multiples(15, 3, 5) == 45


def test_sum_of_multiples_limit_just_above():
    from arithmetic_kit import sum_of_multiples
    assert sum_of_multiples(16, 3, 5) == 60


def test_sum_of_multiples_either_divisor():
    from arithmetic_kit import sum_of_multiples
    assert sum_of_multiples(8, 2, 7) == 19


def test_sum_of_multiples_same_divisor():
    from arithmetic_kit import sum_of_multiples
    assert sum_of_multiples(10, 3, 3) == 18


def test_sum_of_multiples_divisor_one():
    from arithmetic_kit import sum_of_multiples
    assert sum_of_multiples(5, 1, 7) == 10


def test_int_sqrt_zero():
    from arithmetic_kit import int_sqrt
    assert int_sqrt(0) == 0


def test_int_sqrt_one():
    from arithmetic_kit import int_sqrt
    assert int_sqrt(1) == 1


def test_int_sqrt_two():
    from arithmetic_kit import int_sqrt
    assert int_sqrt(2) == 1


def test_int_sqrt_below_square():
    from arithmetic_kit import int_sqrt
    assert int_sqrt(15) == 3


def test_int_sqrt_perfect_square():
    from arithmetic_kit import int_sqrt
    assert int_sqrt(16) == 4


def test_int_sqrt_above_square():
    from arithmetic_kit import int_sqrt
    assert int_sqrt(17) == 4


def test_int_sqrt_negative():
    from arithmetic_kit import int_sqrt
    with pytest.raises(ValueError):
        int_sqrt(-1)


def test_sign_of_product_zero_first():
    from arithmetic_kit import sign_of_product
    assert sign_of_product(0, 5) == 0


def test_sign_of_product_zero_second():
    from arithmetic_kit import sign_of_product
    assert sign_of_product(3, 0) == 0


def test_sign_of_product_negative_positive():
    from arithmetic_kit import sign_of_product
    assert sign_of_product(-2, 5) == -1


def test_sign_of_product_positive_negative():
    from arithmetic_kit import sign_of_product
    assert sign_of_product(2, -5) == -1


def test_sign_of_product_both_negative():
    from arithmetic_kit import sign_of_product
    assert sign_of_product(-3, -4) == 1


def test_sign_of_product_both_positive():
    from arithmetic_kit import sign_of_product
    assert sign_of_product(3, 4) == 1


def test_sign_of_product_minus_one_first():
    from arithmetic_kit import sign_of_product
    assert sign_of_product(-1, 5) == -1


def test_sign_of_product_minus_one_second():
    from arithmetic_kit import sign_of_product
    assert sign_of_product(4, -1) == -1


def test_triangular_zero():
    from arithmetic_kit import triangular
    assert triangular(0) == 0


def test_triangular_negative():
    from arithmetic_kit import triangular
    assert triangular(-3) == 0


def test_triangular_one():
    from arithmetic_kit import triangular
    assert triangular(1) == 1


def test_triangular_four():
    from arithmetic_kit import triangular
    assert triangular(4) == 10


def test_triangular_ten():
    from arithmetic_kit import triangular
    assert triangular(10) == 55


def test_factorial_mod_zero():
    from arithmetic_kit import factorial_mod
    assert factorial_mod(0, 7) == 1


def test_factorial_mod_one():
    from arithmetic_kit import factorial_mod
    assert factorial_mod(1, 7) == 1


def test_factorial_mod_wraps():
    from arithmetic_kit import factorial_mod
    assert factorial_mod(5, 7) == 1


def test_factorial_mod_large_modulus():
    from arithmetic_kit import factorial_mod
    assert factorial_mod(5, 1000) == 120


def test_factorial_mod_six():
    from arithmetic_kit import factorial_mod
    assert factorial_mod(6, 1000) == 720


def test_factorial_mod_modulus_one():
    from arithmetic_kit import factorial_mod
    assert factorial_mod(0, 1) == 0


def test_factorial_mod_four_mod_five():
    from arithmetic_kit import factorial_mod
    assert factorial_mod(4, 5) == 4


def test_reverse_number_basic():
    from arithmetic_kit import reverse_number
    assert reverse_number(123) == 321


def test_reverse_number_negative():
    from arithmetic_kit import reverse_number
    assert reverse_number(-45) == -54


def test_reverse_number_trailing_zero():
    from arithmetic_kit import reverse_number
    assert reverse_number(120) == 21


def test_reverse_number_zero():
    from arithmetic_kit import reverse_number
    assert reverse_number(0) == 0


def test_reverse_number_single_digit():
    from arithmetic_kit import reverse_number
    assert reverse_number(7) == 7


def test_reverse_number_inner_zeros():
    from arithmetic_kit import reverse_number
    assert reverse_number(1005) == 5001


def test_reverse_number_minus_one():
    from arithmetic_kit import reverse_number
    assert reverse_number(-1) == -1


def test_count_divisors_one():
    from arithmetic_kit import count_divisors
    assert count_divisors(1) == 1


def test_count_divisors_two():
    from arithmetic_kit import count_divisors
    assert count_divisors(2) == 2


def test_count_divisors_twelve():
    from arithmetic_kit import count_divisors
    assert count_divisors(12) == 6


def test_count_divisors_square():
    from arithmetic_kit import count_divisors
    assert count_divisors(16) == 5


def test_count_divisors_prime():
    from arithmetic_kit import count_divisors
    assert count_divisors(13) == 2


def test_count_divisors_thirty_six():
    from arithmetic_kit import count_divisors
    assert count_divisors(36) == 9


@pytest.mark.parametrize(
    "n, expected",
    [(3, 6), (0, 0), (100, 5050)],
    ids=["small positive", "zero input", "large value"],
)
def test_triangular_table(n, expected):
    from arithmetic_kit import triangular
    assert triangular(n) == expected


class TestClampEdges:
    def test_clamp_inside(self):
        from arithmetic_kit import clamp
        assert clamp(-3, -10, 10) == -3

    def test_clamp_single_point_range(self):
        from arithmetic_kit import clamp
        assert clamp(9, 4, 4) == 4
