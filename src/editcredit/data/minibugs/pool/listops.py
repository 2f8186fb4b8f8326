"""Helpers for lists of integers."""


def running_total(values: list[int]) -> list[int]:
    """Return the prefix sums of values."""
    totals = []
    acc = 0
    for v in values:
        acc += v
        totals.append(acc)
    return totals


def chunk(values: list[int], size: int) -> list[list[int]]:
    """Split values into consecutive chunks of length size; the last may be shorter."""
    if size < 1:
        raise ValueError("size must be positive")
    return [values[i:i + size] for i in range(0, len(values), size)]


def second_largest(values: list[int]) -> int | None:
    """Return the second largest distinct value, or None when there is none."""
    first = None
    second = None
    for v in values:
        if first is None or v > first:
            second = first
            first = v
        elif v != first and (second is None or v > second):
            second = v
    return second


def rotate_left(values: list[int], k: int) -> list[int]:
    """Rotate values left by k places; k may be negative or exceed the length."""
    if len(values) < 2:
        return list(values)
    k = k % len(values)
    return values[k:] + values[:k]


def dedupe(values: list[int]) -> list[int]:
    """Drop repeated values, keeping the first occurrence of each."""
    seen = set()
    result = []
    for v in values:
        if v not in seen:
            seen.add(v)
            result.append(v)
    return result


def merge_sorted(left: list[int], right: list[int]) -> list[int]:
    """Merge two ascending lists into one ascending list."""
    i = j = 0
    merged = []
    while i < len(left) and j < len(right):
        if left[i] <= right[j]:
            merged.append(left[i])
            i += 1
        else:
            merged.append(right[j])
            j += 1
    merged.extend(left[i:])
    merged.extend(right[j:])
    return merged


def max_subarray_sum(values: list[int]) -> int:
    """Return the largest sum of a non-empty contiguous run, or 0 for an empty list."""
    if not values:
        return 0
    best = current = values[0]
    for v in values[1:]:
        current = max(v, current + v)
        if current > best:
            best = current
    return best


def count_inversions(values: list[int]) -> int:
    """Count the index pairs i < j with values[i] > values[j]."""
    count = 0
    for i in range(len(values)):
        for j in range(i + 1, len(values)):
            if values[i] > values[j]:
                count += 1
    return count


def differences(values: list[int]) -> list[int]:
    """Return the differences between consecutive values."""
    result = []
    for i in range(1, len(values)):
        result.append(values[i] - values[i - 1])
    return result


def longest_increasing_run(values: list[int]) -> int:
    """Return the length of the longest strictly increasing contiguous run."""
    if not values:
        return 0
    best = 1
    current = 1
    for i in range(1, len(values)):
        if values[i] > values[i - 1]:
            current += 1
            best = max(best, current)
        else:
            current = 1
    return best


def sign_counts(values: list[int]) -> tuple[int, int, int]:
    """Count the negative, zero and positive values, in that order."""
    neg = zero = pos = 0
    for v in values:
        if v < 0:
            neg += 1
        elif v == 0:
            zero += 1
        else:
            pos += 1
    return (neg, zero, pos)
