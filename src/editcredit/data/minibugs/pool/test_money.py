import pytest


def test_to_cents_full():
    from money import to_cents
    assert to_cents("12.34") == 1234


def test_to_cents_whole_only():
    from money import to_cents
    assert to_cents("3") == 300


def test_to_cents_negative_one_decimal():
    from money import to_cents
    assert to_cents("-12.5") == -1250


def test_to_cents_small():
    from money import to_cents
    assert to_cents("0.07") == 7


def test_to_cents_no_whole_part():
    from money import to_cents
    assert to_cents(".5") == 50


def test_to_cents_negative_cent():
    from money import to_cents
    assert to_cents("-0.01") == -1


def test_to_cents_truncates():
    from money import to_cents
    assert to_cents("1.999") == 199


def test_to_cents_trailing_dot():
    from money import to_cents
    assert to_cents("4.") == 400


def test_format_cents_zero():
    from money import format_cents
    assert format_cents(0) == "$0.00"


def test_format_cents_few_cents():
    from money import format_cents
    assert format_cents(5) == "$0.05"


def test_format_cents_thousands():
    from money import format_cents
    assert format_cents(123456) == "$1,234.56"


def test_format_cents_negative():
    from money import format_cents
    assert format_cents(-99) == "-$0.99"


def test_format_cents_million():
    from money import format_cents
    assert format_cents(100000000) == "$1,000,000.00"


def test_format_cents_exact_thousand():
    from money import format_cents
    assert format_cents(100000) == "$1,000.00"


def test_format_cents_three_digits():
    from money import format_cents
    assert format_cents(99999) == "$999.99"


def test_format_cents_negative_thousands():
    from money import format_cents
    assert format_cents(-123456) == "-$1,234.56"


def test_format_cents_minus_one_cent():
    from money import format_cents
    assert format_cents(-1) == "-$0.01"


def test_format_cents_billions():
    from money import format_cents
    assert format_cents(1234567890123) == "$12,345,678,901.23"


def test_split_evenly_hundred_by_three():
    from money import split_evenly
    assert split_evenly(100, 3) == [34, 33, 33]


def test_split_evenly_hundred_by_four():
    from money import split_evenly
    assert split_evenly(100, 4) == [25, 25, 25, 25]


def test_split_evenly_five_by_three():
    from money import split_evenly
    assert split_evenly(5, 3) == [2, 2, 1]


def test_split_evenly_fewer_cents():
    from money import split_evenly
    assert split_evenly(2, 5) == [1, 1, 0, 0, 0]


def test_split_evenly_one_part():
    from money import split_evenly
    assert split_evenly(7, 1) == [7]


def test_split_evenly_zero_parts():
    from money import split_evenly
    with pytest.raises(ValueError):
        split_evenly(10, 0)


def test_split_evenly_negative_parts():
    from money import split_evenly
    with pytest.raises(ValueError):
        split_evenly(10, -2)


def test_apply_discount_ten_percent():
    from money import apply_discount
    assert apply_discount(1000, 10) == 900


def test_apply_discount_half_rounds_up():
    from money import apply_discount
    assert apply_discount(999, 50) == 499


def test_apply_discount_one_cent_half():
    from money import apply_discount
    assert apply_discount(1, 50) == 0


def test_apply_discount_below_half():
    from money import apply_discount
    assert apply_discount(49, 1) == 49


def test_apply_discount_small_fraction():
    from money import apply_discount
    assert apply_discount(3, 33) == 2


def test_apply_discount_no_discount():
    from money import apply_discount
    assert apply_discount(1000, 0) == 1000


def test_apply_discount_full_discount():
    from money import apply_discount
    assert apply_discount(1000, 100) == 0


def test_apply_discount_over_hundred():
    from money import apply_discount
    with pytest.raises(ValueError):
        apply_discount(1000, 101)


def test_apply_discount_negative_percent():
    from money import apply_discount
    with pytest.raises(ValueError):
        apply_discount(1000, -1)


def test_compound_growth_zero_years():
    from money import compound_growth
    assert compound_growth(10000, 500, 0) == 10000


def test_compound_growth_one_year():
    from money import compound_growth
    assert compound_growth(10000, 500, 1) == 10500


def test_compound_growth_two_years():
    from money import compound_growth
    assert compound_growth(10000, 500, 2) == 11025


def test_compound_growth_zero_rate():
    from money import compound_growth
    assert compound_growth(10000, 0, 5) == 10000


def test_compound_growth_floors():
    from money import compound_growth
    assert compound_growth(999, 100, 1) == 1008


def test_compound_growth_doubling():
    from money import compound_growth
    assert compound_growth(100, 10000, 3) == 800


def test_compound_growth_large_balance():
    from money import compound_growth
    assert compound_growth(100000000, 100, 1) == 101000000


def test_make_change_zero():
    from money import make_change
    assert make_change(0) == (0, 0, 0, 0)


def test_make_change_one_of_each():
    from money import make_change
    assert make_change(41) == (1, 1, 1, 1)


def test_make_change_ninety_nine():
    from money import make_change
    assert make_change(99) == (3, 2, 0, 4)


def test_make_change_thirty():
    from money import make_change
    assert make_change(30) == (1, 0, 1, 0)


def test_make_change_pennies_only():
    from money import make_change
    assert make_change(4) == (0, 0, 0, 4)


def test_make_change_one_dime():
    from money import make_change
    assert make_change(10) == (0, 1, 0, 0)


def test_make_change_one_quarter():
    from money import make_change
    assert make_change(25) == (1, 0, 0, 0)


def test_progressive_tax_zero():
    from money import progressive_tax
    assert progressive_tax(0) == 0


def test_progressive_tax_first_band_top():
    from money import progressive_tax
    assert progressive_tax(10000) == 0


def test_progressive_tax_second_band_start():
    from money import progressive_tax
    assert progressive_tax(10010) == 1


def test_progressive_tax_second_band_middle():
    from money import progressive_tax
    assert progressive_tax(25000) == 1500


def test_progressive_tax_second_band_top():
    from money import progressive_tax
    assert progressive_tax(40000) == 3000


def test_progressive_tax_top_band_start():
    from money import progressive_tax
    assert progressive_tax(40005) == 3001


def test_progressive_tax_top_band():
    from money import progressive_tax
    assert progressive_tax(50000) == 5000


def test_progressive_tax_second_band_floor():
    from money import progressive_tax
    assert progressive_tax(10019) == 1


def test_progressive_tax_top_band_floor():
    from money import progressive_tax
    assert progressive_tax(40004) == 3000


def test_progressive_tax_top_band_ten():
    from money import progressive_tax
    assert progressive_tax(40010) == 3002


def test_best_offer_empty():
    from money import best_offer
    assert best_offer([]) == -1


def test_best_offer_single():
    from money import best_offer
    assert best_offer([(100, 1)]) == 0


def test_best_offer_bulk_wins():
    from money import best_offer
    assert best_offer([(300, 2), (200, 1)]) == 0


def test_best_offer_single_wins():
    from money import best_offer
    assert best_offer([(300, 2), (140, 1)]) == 1


def test_best_offer_tie_keeps_first():
    from money import best_offer
    assert best_offer([(100, 2), (50, 1)]) == 0


def test_best_offer_skips_zero_quantity():
    from money import best_offer
    assert best_offer([(100, 0), (50, 1)]) == 1


def test_best_offer_only_zero_quantity():
    from money import best_offer
    assert best_offer([(100, 0)]) == -1


def test_ledger_balance_empty():
    from money import ledger_balance
    assert ledger_balance([]) == 0


def test_ledger_balance_credit():
    from money import ledger_balance
    assert ledger_balance([("credit", 500)]) == 500


def test_ledger_balance_debit():
    from money import ledger_balance
    assert ledger_balance([("debit", 200)]) == -200


def test_ledger_balance_mixed():
    from money import ledger_balance
    assert ledger_balance([("credit", 500), ("debit", 120)]) == 380


def test_ledger_balance_unknown_kind():
    from money import ledger_balance
    assert ledger_balance([("refund", 50), ("credit", 1)]) == 1


def test_percent_change_bp_increase():
    from money import percent_change_bp
    assert percent_change_bp(100, 110) == 1000


def test_percent_change_bp_decrease():
    from money import percent_change_bp
    assert percent_change_bp(100, 90) == -1000


def test_percent_change_bp_truncates_up():
    from money import percent_change_bp
    assert percent_change_bp(3, 4) == 3333


def test_percent_change_bp_truncates_down():
    from money import percent_change_bp
    assert percent_change_bp(3, 2) == -3333


def test_percent_change_bp_negative_base():
    from money import percent_change_bp
    assert percent_change_bp(-100, -50) == -5000


def test_percent_change_bp_unchanged():
    from money import percent_change_bp
    assert percent_change_bp(7, 7) == 0


def test_percent_change_bp_doubling():
    from money import percent_change_bp
    assert percent_change_bp(1, 2) == 10000


def test_percent_change_bp_minus_one_base():
    from money import percent_change_bp
    assert percent_change_bp(-1, -2) == 10000


def test_percent_change_bp_zero_base():
    from money import percent_change_bp
    with pytest.raises(ValueError):
        percent_change_bp(0, 5)


def test_round_to_nickel_zero():
    from money import round_to_nickel
    assert round_to_nickel(0) == 0


def test_round_to_nickel_rounds_down():
    from money import round_to_nickel
    assert round_to_nickel(12) == 10


def test_round_to_nickel_rounds_up():
    from money import round_to_nickel
    assert round_to_nickel(13) == 15


def test_round_to_nickel_exact():
    from money import round_to_nickel
    assert round_to_nickel(15) == 15


def test_round_to_nickel_down_by_two():
    from money import round_to_nickel
    assert round_to_nickel(17) == 15


def test_round_to_nickel_up_by_two():
    from money import round_to_nickel
    assert round_to_nickel(18) == 20


def test_round_to_nickel_four():
    from money import round_to_nickel
    assert round_to_nickel(4) == 5


@pytest.mark.parametrize(
    "cents, expected",
    [(0, "$0.00"), (42, "$0.42"), (1234567, "$12,345.67")],
    ids=["zero amount", "under a dollar", "with thousands"],
)
def test_format_cents_table(cents, expected):
    from money import format_cents
    assert format_cents(cents) == expected
