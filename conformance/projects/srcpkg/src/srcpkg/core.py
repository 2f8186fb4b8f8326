"""The code under test."""


def clamp(value, low, high):
    """Clamp value into [low, high]."""
    if low > high:
        raise ValueError("low > high")
    return max(low, min(value, high))


def slug(text):
    """Lower-case words joined by dashes."""
    words = [w for w in "".join(c if c.isalnum() else " " for c in text).split() if w]
    return "-".join(w.lower() for w in words)


def tally(items):
    """Count each item, in first-seen order."""
    counts = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    return counts
