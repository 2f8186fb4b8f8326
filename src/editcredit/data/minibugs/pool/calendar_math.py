"""Gregorian calendar and clock arithmetic on plain integers and strings."""


def is_leap_year(year: int) -> bool:
    """Tell whether year is a Gregorian leap year."""
    if year % 400 == 0:
        return True
    if year % 100 == 0:
        return False
    return year % 4 == 0


def days_in_month(year: int, month: int) -> int:
    """Return the number of days in month (1-12) of year."""
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    if month in (4, 6, 9, 11):
        return 30
    return 31


def day_of_year(year: int, month: int, day: int) -> int:
    """Return the 1-based position of a date within its year."""
    lengths = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30]
    if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0):
        lengths[1] = 29
    return sum(lengths[: month - 1]) + day


def weekday(year: int, month: int, day: int) -> int:
    """Return the weekday of a Gregorian date, 0 for Monday through 6 for Sunday."""
    offsets = [0, 3, 2, 5, 0, 3, 5, 1, 4, 6, 2, 4]
    if month < 3:
        year -= 1
    sunday_based = (year + year // 4 - year // 100 + year // 400 + offsets[month - 1] + day) % 7
    return (sunday_based + 6) % 7


def next_day(year: int, month: int, day: int) -> tuple[int, int, int]:
    """Return the date that follows (year, month, day)."""
    if month == 2:
        last = 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    elif month in (4, 6, 9, 11):
        last = 30
    else:
        last = 31
    if day < last:
        return (year, month, day + 1)
    if month < 12:
        return (year, month + 1, 1)
    return (year + 1, 1, 1)


def minutes_until(start: str, end: str) -> int:
    """Return the minutes from clock time start to end ('HH:MM'), wrapping past midnight."""
    start_minutes = int(start[:2]) * 60 + int(start[3:])
    end_minutes = int(end[:2]) * 60 + int(end[3:])
    diff = end_minutes - start_minutes
    if diff < 0:
        diff += 24 * 60
    return diff


def format_duration(seconds: int) -> str:
    """Render seconds as 'H:MM:SS', or as 'M:SS' when under an hour."""
    hours = seconds // 3600
    minutes = (seconds % 3600) // 60
    secs = seconds % 60
    if hours > 0:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def quarter_of(month: int) -> int:
    """Return the calendar quarter (1-4) that month (1-12) falls in."""
    if month < 1 or month > 12:
        raise ValueError("month out of range")
    return (month - 1) // 3 + 1


def business_days(start_weekday: int, length: int) -> int:
    """Count Monday-Friday days among length days starting on start_weekday (0 = Monday)."""
    count = 0
    for offset in range(length):
        if (start_weekday + offset) % 7 < 5:
            count += 1
    return count


def age_on(birth: tuple[int, int, int], today: tuple[int, int, int]) -> int:
    """Return the completed years between birth and today, both (year, month, day)."""
    years = today[0] - birth[0]
    if (today[1], today[2]) < (birth[1], birth[2]):
        years -= 1
    return years
