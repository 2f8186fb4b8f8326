import pytest


def test_is_leap_year_divisible_by_four():
    from calendar_math import is_leap_year
    assert is_leap_year(2024) == True


def test_is_leap_year_common_year():
    from calendar_math import is_leap_year
    assert is_leap_year(2023) == False


def test_is_leap_year_century():
    from calendar_math import is_leap_year
    assert is_leap_year(1900) == False


def test_is_leap_year_four_centuries():
    from calendar_math import is_leap_year
    assert is_leap_year(2000) == True


def test_is_leap_year_century_2100():
    from calendar_math import is_leap_year
    assert is_leap_year(2100) == False


def test_is_leap_year_year_1600():
    from calendar_math import is_leap_year
    assert is_leap_year(1600) == True


def test_is_leap_year_odd_year():
    from calendar_math import is_leap_year
    assert is_leap_year(2001) == False


def test_days_in_month_february_common():
    from calendar_math import days_in_month
    assert days_in_month(2023, 2) == 28


def test_days_in_month_february_leap():
    from calendar_math import days_in_month
    assert days_in_month(2024, 2) == 29


def test_days_in_month_february_century():
    from calendar_math import days_in_month
    assert days_in_month(1900, 2) == 28


def test_days_in_month_february_four_centuries():
    from calendar_math import days_in_month
    assert days_in_month(2000, 2) == 29


def test_days_in_month_january():
    from calendar_math import days_in_month
    assert days_in_month(2023, 1) == 31


def test_days_in_month_march():
    from calendar_math import days_in_month
    assert days_in_month(2023, 3) == 31


def test_days_in_month_april():
    from calendar_math import days_in_month
    assert days_in_month(2023, 4) == 30


def test_days_in_month_may():
    from calendar_math import days_in_month
    assert days_in_month(2023, 5) == 31


def test_days_in_month_june():
    from calendar_math import days_in_month
    assert days_in_month(2023, 6) == 30


def test_days_in_month_july():
    from calendar_math import days_in_month
    assert days_in_month(2023, 7) == 31


def test_days_in_month_august():
    from calendar_math import days_in_month
    assert days_in_month(2023, 8) == 31


def test_days_in_month_september():
    from calendar_math import days_in_month
    assert days_in_month(2023, 9) == 30


def test_days_in_month_october():
    from calendar_math import days_in_month
    assert days_in_month(2023, 10) == 31


def test_days_in_month_november():
    from calendar_math import days_in_month
    assert days_in_month(2023, 11) == 30


def test_days_in_month_december():
    from calendar_math import days_in_month
    assert days_in_month(2023, 12) == 31


def test_day_of_year_first_day():
    from calendar_math import day_of_year
    assert day_of_year(2023, 1, 1) == 1


def test_day_of_year_last_day_common():
    from calendar_math import day_of_year
    assert day_of_year(2023, 12, 31) == 365


def test_day_of_year_last_day_leap():
    from calendar_math import day_of_year
    assert day_of_year(2024, 12, 31) == 366


def test_day_of_year_march_first_leap():
    from calendar_math import day_of_year
    assert day_of_year(2024, 3, 1) == 61


def test_day_of_year_march_first_common():
    from calendar_math import day_of_year
    assert day_of_year(2023, 3, 1) == 60


def test_day_of_year_march_first_century():
    from calendar_math import day_of_year
    assert day_of_year(1900, 3, 1) == 60


def test_day_of_year_march_first_2000():
    from calendar_math import day_of_year
    assert day_of_year(2000, 3, 1) == 61


def test_day_of_year_february_first():
    from calendar_math import day_of_year
    assert day_of_year(2023, 2, 1) == 32


def test_weekday_new_year_2024():
    from calendar_math import weekday
    assert weekday(2024, 1, 1) == 0


def test_weekday_y2k():
    from calendar_math import weekday
    assert weekday(2000, 1, 1) == 5


def test_weekday_leap_day():
    from calendar_math import weekday
    assert weekday(2024, 2, 29) == 3


def test_weekday_epoch():
    from calendar_math import weekday
    assert weekday(1970, 1, 1) == 3


def test_weekday_march_2024():
    from calendar_math import weekday
    assert weekday(2024, 3, 1) == 4


def test_weekday_century_march():
    from calendar_math import weekday
    assert weekday(1900, 3, 1) == 3


def test_weekday_march_2000():
    from calendar_math import weekday
    assert weekday(2000, 3, 1) == 2


def test_next_day_mid_month():
    from calendar_math import next_day
    assert next_day(2023, 1, 15) == (2023, 1, 16)


def test_next_day_end_of_january():
    from calendar_math import next_day
    assert next_day(2023, 1, 31) == (2023, 2, 1)


def test_next_day_end_of_february():
    from calendar_math import next_day
    assert next_day(2023, 2, 28) == (2023, 3, 1)


def test_next_day_leap_february_28():
    from calendar_math import next_day
    assert next_day(2024, 2, 28) == (2024, 2, 29)


def test_next_day_leap_february_29():
    from calendar_math import next_day
    assert next_day(2024, 2, 29) == (2024, 3, 1)


def test_next_day_century_february():
    from calendar_math import next_day
    assert next_day(1900, 2, 28) == (1900, 3, 1)


def test_next_day_year_2000_february():
    from calendar_math import next_day
    assert next_day(2000, 2, 28) == (2000, 2, 29)


def test_next_day_end_of_year():
    from calendar_math import next_day
    assert next_day(2023, 12, 31) == (2024, 1, 1)


def test_next_day_march_30():
    from calendar_math import next_day
    assert next_day(2023, 3, 30) == (2023, 3, 31)


def test_next_day_end_of_april():
    from calendar_math import next_day
    assert next_day(2023, 4, 30) == (2023, 5, 1)


def test_next_day_may_30():
    from calendar_math import next_day
    assert next_day(2023, 5, 30) == (2023, 5, 31)


def test_next_day_end_of_june():
    from calendar_math import next_day
    assert next_day(2023, 6, 30) == (2023, 7, 1)


def test_next_day_july_30():
    from calendar_math import next_day
    assert next_day(2023, 7, 30) == (2023, 7, 31)


def test_next_day_august_30():
    from calendar_math import next_day
    assert next_day(2023, 8, 30) == (2023, 8, 31)


def test_next_day_end_of_september():
    from calendar_math import next_day
    assert next_day(2023, 9, 30) == (2023, 10, 1)


def test_next_day_october_30():
    from calendar_math import next_day
    assert next_day(2023, 10, 30) == (2023, 10, 31)


def test_next_day_end_of_november():
    from calendar_math import next_day
    assert next_day(2023, 11, 30) == (2023, 12, 1)


def test_next_day_december_30():
    from calendar_math import next_day
    assert next_day(2023, 12, 30) == (2023, 12, 31)


def test_next_day_february_27():
    from calendar_math import next_day
    assert next_day(2023, 2, 27) == (2023, 2, 28)


def test_next_day_april_29():
    from calendar_math import next_day
    assert next_day(2023, 4, 29) == (2023, 4, 30)


def test_minutes_until_same_morning():
    from calendar_math import minutes_until
    assert minutes_until("09:00", "10:30") == 90


def test_minutes_until_past_midnight():
    from calendar_math import minutes_until
    assert minutes_until("23:30", "00:15") == 45


def test_minutes_until_same_time():
    from calendar_math import minutes_until
    assert minutes_until("12:00", "12:00") == 0


def test_minutes_until_almost_a_day():
    from calendar_math import minutes_until
    assert minutes_until("00:00", "23:59") == 1439


def test_minutes_until_one_minute_back():
    from calendar_math import minutes_until
    assert minutes_until("10:05", "10:04") == 1439


def test_minutes_until_hours_and_minutes():
    from calendar_math import minutes_until
    assert minutes_until("01:02", "03:04") == 122


def test_format_duration_zero():
    from calendar_math import format_duration
    assert format_duration(0) == "0:00"


def test_format_duration_under_a_minute():
    from calendar_math import format_duration
    assert format_duration(59) == "0:59"


def test_format_duration_one_minute():
    from calendar_math import format_duration
    assert format_duration(60) == "1:00"


def test_format_duration_under_an_hour():
    from calendar_math import format_duration
    assert format_duration(3599) == "59:59"


def test_format_duration_one_hour():
    from calendar_math import format_duration
    assert format_duration(3600) == "1:00:00"


def test_format_duration_mixed():
    from calendar_math import format_duration
    assert format_duration(3725) == "1:02:05"


def test_format_duration_over_a_day():
    from calendar_math import format_duration
    assert format_duration(90061) == "25:01:01"


def test_quarter_of_january():
    from calendar_math import quarter_of
    assert quarter_of(1) == 1


def test_quarter_of_march():
    from calendar_math import quarter_of
    assert quarter_of(3) == 1


def test_quarter_of_april():
    from calendar_math import quarter_of
    assert quarter_of(4) == 2


def test_quarter_of_june():
    from calendar_math import quarter_of
    assert quarter_of(6) == 2


def test_quarter_of_july():
    from calendar_math import quarter_of
    assert quarter_of(7) == 3


def test_quarter_of_october():
    from calendar_math import quarter_of
    assert quarter_of(10) == 4


def test_quarter_of_december():
    from calendar_math import quarter_of
    assert quarter_of(12) == 4


def test_quarter_of_zero():
    from calendar_math import quarter_of
    with pytest.raises(ValueError):
        quarter_of(0)


def test_quarter_of_thirteen():
    from calendar_math import quarter_of
    with pytest.raises(ValueError):
        quarter_of(13)


def test_business_days_work_week():
    from calendar_math import business_days
    assert business_days(0, 5) == 5


def test_business_days_full_week():
    from calendar_math import business_days
    assert business_days(0, 7) == 5


def test_business_days_weekend():
    from calendar_math import business_days
    assert business_days(5, 2) == 0


def test_business_days_from_friday():
    from calendar_math import business_days
    assert business_days(4, 3) == 1


def test_business_days_from_sunday():
    from calendar_math import business_days
    assert business_days(6, 2) == 1


def test_business_days_no_days():
    from calendar_math import business_days
    assert business_days(0, 0) == 0


def test_business_days_ten_days():
    from calendar_math import business_days
    assert business_days(3, 10) == 7


def test_age_on_birthday():
    from calendar_math import age_on
    assert age_on((2000, 5, 10), (2020, 5, 10)) == 20


def test_age_on_day_before_birthday():
    from calendar_math import age_on
    assert age_on((2000, 5, 10), (2020, 5, 9)) == 19


def test_age_on_day_after_birthday():
    from calendar_math import age_on
    assert age_on((2000, 5, 10), (2020, 5, 11)) == 20


def test_age_on_later_month():
    from calendar_math import age_on
    assert age_on((2000, 5, 10), (2020, 6, 1)) == 20


def test_age_on_earlier_month():
    from calendar_math import age_on
    assert age_on((2000, 5, 10), (2020, 4, 30)) == 19


def test_age_on_new_year():
    from calendar_math import age_on
    assert age_on((2000, 12, 31), (2001, 1, 1)) == 0


def test_age_on_birth_day():
    from calendar_math import age_on
    assert age_on((1990, 1, 1), (1990, 1, 1)) == 0


@pytest.mark.parametrize(
    "month, day, expected",
    [
        (1, 1, 6),
        (2, 14, 1),
        (3, 15, 2),
        (4, 1, 5),
        (5, 31, 2),
        (6, 21, 2),
        (7, 4, 1),
        (8, 15, 1),
        (9, 30, 5),
        (10, 31, 1),
        (11, 23, 3),
        (12, 25, 0),
    ],
    ids=[
        "new year day",
        "valentines day",
        "ides of march",
        "april first",
        "end of may",
        "summer solstice",
        "fourth of july",
        "mid august",
        "end of september",
        "halloween night",
        "late november",
        "christmas day",
    ],
)
def test_weekday_every_month_2023(month, day, expected):
    from calendar_math import weekday
    assert weekday(2023, month, day) == expected
