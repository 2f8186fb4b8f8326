"""Small integer arithmetic helpers."""


def clamp(value: int, low: int, high: int) -> int:
    """Limit value to the closed range [low, high]."""
    if value < low:
        return low
    if value > high:
        return high
    return value


def digit_sum(n: int) -> int:
    """Return the sum of the decimal digits of abs(n)."""
    n = abs(n)
    total = 0
    while n > 0:
        total += n % 10
        n //= 10
    return total


def greatest_divisor(a: int, b: int) -> int:
    """Return the greatest common divisor of a and b, never negative."""
    a, b = abs(a), abs(b)
    while b != 0:
        a, b = b, a % b
    return a


def is_prime(n: int) -> bool:
    """Tell whether n is a prime number."""
    if n < 2:
        return False
    if n < 4:
        return True
    if n % 2 == 0:
        return False
    i = 3
    while i * i <= n:
        if n % i == 0:
            return False
        i += 2
    return True


def sum_of_multiples(limit: int, a: int, b: int) -> int:
    """Sum the positive integers below limit that are divisible by a or by b."""
    total = 0
    for x in range(1, limit):
        if x % a == 0 or x % b == 0:
            total += x
    return total


def int_sqrt(n: int) -> int:
    """Return the floor of the square root of a non-negative integer."""
    if n < 0:
        raise ValueError("negative input")
    root = 0
    while (root + 1) * (root + 1) <= n:
        root += 1
    return root


def sign_of_product(a: int, b: int) -> int:
    """Return -1, 0 or 1: the sign of a * b, computed without multiplying."""
    if a == 0 or b == 0:
        return 0
    if (a < 0) != (b < 0):
        return -1
    return 1


def triangular(n: int) -> int:
    """Return 1 + 2 + ... + n, or 0 when n is not positive."""
    if n <= 0:
        return 0
    return n * (n + 1) // 2


def factorial_mod(n: int, m: int) -> int:
    """Return n! modulo m."""
    result = 1
    for i in range(2, n + 1):
        result = result * i % m
    return result % m


def reverse_number(n: int) -> int:
    """Reverse the decimal digits of n, keeping its sign."""
    sign = -1 if n < 0 else 1
    n = abs(n)
    result = 0
    while n > 0:
        result = result * 10 + n % 10
        n //= 10
    return sign * result


def count_divisors(n: int) -> int:
    """Count the positive divisors of a positive integer."""
    count = 0
    i = 1
    while i * i <= n:
        if n % i == 0:
            count += 1 if i * i == n else 2
        i += 1
    return count
