"""Helpers for closed integer intervals written as (start, end) tuples."""


def overlaps(a: tuple[int, int], b: tuple[int, int]) -> bool:
    """Tell whether two closed intervals share at least one point."""
    a_start, a_end = a
    b_start, b_end = b
    return a_start <= b_end and b_start <= a_end


def span_length(interval: tuple[int, int]) -> int:
    """Count the integer points in a closed interval (0 when end < start)."""
    start, end = interval
    if end < start:
        return 0
    return end - start + 1


def contains(interval: tuple[int, int], x: int, closed: bool = True) -> bool:
    """Tell whether x lies in the interval, counting its ends only when closed."""
    start, end = interval
    if closed:
        return start <= x <= end
    return start < x < end


def merge_intervals(items: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge overlapping closed intervals and return them sorted."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(items):
        if merged and start <= merged[-1][1]:
            last_start, last_end = merged[-1]
            merged[-1] = (last_start, max(last_end, end))
        else:
            merged.append((start, end))
    return merged


def intersection(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int] | None:
    """Return the common part of two closed intervals, or None when they are disjoint."""
    start = max(a[0], b[0])
    end = min(a[1], b[1])
    if start > end:
        return None
    return (start, end)


def covered_points(items: list[tuple[int, int]]) -> int:
    """Count the integer points covered by at least one closed interval."""
    points = set()
    for start, end in items:
        for x in range(start, end + 1):
            points.add(x)
    return len(points)


def find_gaps(items: list[tuple[int, int]], low: int, high: int) -> list[tuple[int, int]]:
    """List the uncovered parts of [low, high], given sorted disjoint closed intervals."""
    gaps = []
    cursor = low
    for start, end in items:
        if cursor > high:
            break
        if start > cursor:
            gaps.append((cursor, min(start - 1, high)))
        cursor = max(cursor, end + 1)
    if cursor <= high:
        gaps.append((cursor, high))
    return gaps


def split_at(interval: tuple[int, int], point: int) -> list[tuple[int, int]]:
    """Split a closed interval so that point starts the second part; drop empty parts."""
    start, end = interval
    parts = []
    if start <= point - 1:
        parts.append((start, min(point - 1, end)))
    if point <= end:
        parts.append((max(point, start), end))
    return parts


def max_depth(items: list[tuple[int, int]]) -> int:
    """Return the largest number of closed intervals sharing one point."""
    events = []
    for start, end in items:
        events.append((start, 0))
        events.append((end, 1))
    events.sort()
    depth = best = 0
    for _, kind in events:
        if kind == 0:
            depth += 1
            best = max(best, depth)
        else:
            depth -= 1
    return best


def distance_to(interval: tuple[int, int], x: int) -> int:
    """Return how far x lies outside the closed interval (0 when inside)."""
    start, end = interval
    if x < start:
        return start - x
    if x > end:
        return x - end
    return 0
