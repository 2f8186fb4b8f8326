"""Bit manipulation helpers for non-negative integers."""


def popcount(n: int) -> int:
    """Count the set bits of a non-negative integer."""
    count = 0
    while n > 0:
        count += n & 1
        n >>= 1
    return count


def is_power_of_two(n: int) -> bool:
    """Tell whether n is a positive power of two."""
    if n <= 0:
        return False
    return n & (n - 1) == 0


def write_bit(n: int, index: int, value: bool) -> int:
    """Return n with the bit at index set when value is true and cleared otherwise."""
    mask = 1 << index
    if value:
        return n | mask
    return n & ~mask


def bits_needed(n: int) -> int:
    """Return how many binary digits non-negative n needs (1 for zero)."""
    if n == 0:
        return 1
    bits = 0
    while n:
        bits += 1
        n >>= 1
    return bits


def reverse_bits(n: int, width: int) -> int:
    """Reverse the order of the lowest width bits of n."""
    result = 0
    for _ in range(width):
        result = (result << 1) | (n & 1)
        n >>= 1
    return result


def gray_code(n: int) -> int:
    """Return the reflected binary Gray code of a non-negative integer."""
    if n < 0:
        raise ValueError("negative input")
    shifted = n >> 1
    return n ^ shifted


def from_gray(g: int) -> int:
    """Convert a reflected binary Gray code back to a plain integer."""
    n = 0
    while g:
        n ^= g
        g >>= 1
    return n


def lowest_set_index(n: int) -> int:
    """Return the index of the lowest set bit of n, or -1 when n is zero."""
    if n == 0:
        return -1
    index = 0
    while n & 1 == 0:
        n >>= 1
        index += 1
    return index


def pack_rgb(r: int, g: int, b: int) -> int:
    """Pack three channel values, clamped to 0-255, into one 24-bit integer."""
    channels = []
    for c in (r, g, b):
        if c < 0:
            c = 0
        elif c > 255:
            c = 255
        channels.append(c)
    return (channels[0] << 16) | (channels[1] << 8) | channels[2]


def unpack_rgb(value: int) -> tuple[int, int, int]:
    """Split a 24-bit integer into its (red, green, blue) channels."""
    red = (value >> 16) & 255
    green = (value >> 8) & 255
    blue = value & 255
    return (red, green, blue)


def hamming_distance(a: int, b: int) -> int:
    """Count the bit positions in which non-negative a and b differ."""
    diff = a ^ b
    count = 0
    while diff:
        diff &= diff - 1
        count += 1
    return count
