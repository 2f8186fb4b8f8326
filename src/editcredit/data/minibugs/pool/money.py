"""Money helpers working in integer cents."""


def to_cents(text: str) -> int:
    """Parse an amount such as '-12.5' or '3' into integer cents, truncating extra digits."""
    negative = text.startswith("-")
    if negative:
        text = text[1:]
    whole, _, frac = text.partition(".")
    frac = (frac + "00")[:2]
    cents = int(whole or "0") * 100 + int(frac)
    return -cents if negative else cents


def format_cents(cents: int) -> str:
    """Format integer cents as a dollar string with thousands separators."""
    sign = "-" if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    digits = str(dollars)
    groups = []
    while len(digits) > 3:
        groups.insert(0, digits[-3:])
        digits = digits[:-3]
    groups.insert(0, digits)
    return f"{sign}${','.join(groups)}.{rest:02d}"


def split_evenly(total: int, parts: int) -> list[int]:
    """Split total cents into parts shares differing by at most one, larger shares first."""
    if parts <= 0:
        raise ValueError("parts must be positive")
    base, extra = divmod(total, parts)
    return [base + 1 if i < extra else base for i in range(parts)]


def apply_discount(cents: int, percent: int) -> int:
    """Reduce cents by percent (0-100), rounding the discount half up to whole cents."""
    if percent < 0 or percent > 100:
        raise ValueError("percent out of range")
    discount = (cents * percent + 50) // 100
    return cents - discount


def compound_growth(cents: int, rate_bp: int, years: int) -> int:
    """Grow cents by rate_bp basis points a year for years, flooring each year."""
    balance = cents
    for _ in range(years):
        balance += balance * rate_bp // 10000
    return balance


def make_change(cents: int) -> tuple[int, ...]:
    """Return the (quarters, dimes, nickels, pennies) that make cents with fewest coins."""
    counts = []
    for coin in (25, 10, 5, 1):
        counts.append(cents // coin)
        cents = cents % coin
    return tuple(counts)


def progressive_tax(income: int) -> int:
    """Tax income at 0% up to 10000, 10% up to 40000 and 20% above, flooring each band."""
    tax = 0
    if income > 40000:
        tax += (income - 40000) * 20 // 100
        income = 40000
    if income > 10000:
        tax += (income - 10000) * 10 // 100
    return tax


def best_offer(offers: list[tuple[int, int]]) -> int:
    """Return the index of the cheapest (price, quantity) offer per unit, -1 if none."""
    best = -1
    for i, (price, qty) in enumerate(offers):
        if qty <= 0:
            continue
        if best == -1 or price * offers[best][1] < offers[best][0] * qty:
            best = i
    return best


def ledger_balance(entries: list[tuple[str, int]]) -> int:
    """Add 'credit' amounts and subtract 'debit' amounts, ignoring other kinds."""
    balance = 0
    for kind, amount in entries:
        if kind == "credit":
            balance += amount
        elif kind == "debit":
            balance -= amount
    return balance


def percent_change_bp(old: int, new: int) -> int:
    """Return the relative change from old to new in basis points, truncated toward zero."""
    if old == 0:
        raise ValueError("old must be non-zero")
    diff = (new - old) * 10000
    magnitude = abs(diff) // abs(old)
    return magnitude if (diff < 0) == (old < 0) else -magnitude


def round_to_nickel(cents: int) -> int:
    """Round non-negative cents to the nearest multiple of 5."""
    remainder = cents % 5
    if remainder >= 3:
        return cents + 5 - remainder
    return cents - remainder
