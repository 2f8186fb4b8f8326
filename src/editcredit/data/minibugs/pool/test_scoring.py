import pytest


def test_bowling_score_gutter_game():
    from scoring import bowling_score
    assert bowling_score([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]) == 0


def test_bowling_score_all_ones():
    from scoring import bowling_score
    assert bowling_score([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]) == 20


def test_bowling_score_perfect_game():
    from scoring import bowling_score
    assert bowling_score([10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10, 10]) == 300


def test_bowling_score_one_spare():
    from scoring import bowling_score
    assert bowling_score([5, 5, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]) == 16


def test_bowling_score_one_strike():
    from scoring import bowling_score
    assert bowling_score([10, 3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]) == 24


def test_bowling_score_all_nines():
    from scoring import bowling_score
    assert bowling_score([9, 0, 9, 0, 9, 0, 9, 0, 9, 0, 9, 0, 9, 0, 9, 0, 9, 0, 9, 0]) == 90


def test_bowling_score_all_spares():
    from scoring import bowling_score
    assert bowling_score([5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5]) == 150


def test_bowling_score_tenth_frame_spare():
    from scoring import bowling_score
    assert bowling_score([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 3, 5]) == 15


def test_tennis_call_love_all():
    from scoring import tennis_call
    assert tennis_call(0, 0) == "love-love"


def test_tennis_call_thirty_fifteen():
    from scoring import tennis_call
    assert tennis_call(2, 1) == "30-15"


def test_tennis_call_love_forty():
    from scoring import tennis_call
    assert tennis_call(0, 3) == "love-40"


def test_tennis_call_forty_thirty():
    from scoring import tennis_call
    assert tennis_call(3, 2) == "40-30"


def test_tennis_call_thirty_forty():
    from scoring import tennis_call
    assert tennis_call(2, 3) == "30-40"


def test_tennis_call_deuce():
    from scoring import tennis_call
    assert tennis_call(3, 3) == "deuce"


def test_tennis_call_long_deuce():
    from scoring import tennis_call
    assert tennis_call(4, 4) == "deuce"


def test_tennis_call_advantage_first():
    from scoring import tennis_call
    assert tennis_call(4, 3) == "advantage p1"


def test_tennis_call_advantage_second():
    from scoring import tennis_call
    assert tennis_call(3, 4) == "advantage p2"


def test_tennis_call_game_after_deuce():
    from scoring import tennis_call
    assert tennis_call(5, 3) == "game p1"


def test_tennis_call_game_first():
    from scoring import tennis_call
    assert tennis_call(4, 2) == "game p1"


def test_tennis_call_game_second():
    from scoring import tennis_call
    assert tennis_call(1, 4) == "game p2"


def test_tennis_call_long_game_second():
    from scoring import tennis_call
    assert tennis_call(6, 8) == "game p2"


def test_letter_grade_high_a():
    from scoring import letter_grade
    assert letter_grade(95) == "A"


def test_letter_grade_lowest_a():
    from scoring import letter_grade
    assert letter_grade(90) == "A"


def test_letter_grade_b_plus():
    from scoring import letter_grade
    assert letter_grade(89) == "B+"


def test_letter_grade_b_plus_lowest():
    from scoring import letter_grade
    assert letter_grade(87) == "B+"


def test_letter_grade_plain_b():
    from scoring import letter_grade
    assert letter_grade(86) == "B"


def test_letter_grade_lowest_b():
    from scoring import letter_grade
    assert letter_grade(80) == "B"


def test_letter_grade_c_plus():
    from scoring import letter_grade
    assert letter_grade(79) == "C+"


def test_letter_grade_lowest_c():
    from scoring import letter_grade
    assert letter_grade(70) == "C"


def test_letter_grade_d_plus():
    from scoring import letter_grade
    assert letter_grade(69) == "D+"


def test_letter_grade_d_plus_lowest():
    from scoring import letter_grade
    assert letter_grade(67) == "D+"


def test_letter_grade_plain_d():
    from scoring import letter_grade
    assert letter_grade(66) == "D"


def test_letter_grade_lowest_d():
    from scoring import letter_grade
    assert letter_grade(60) == "D"


def test_letter_grade_fail():
    from scoring import letter_grade
    assert letter_grade(59) == "F"


def test_dart_points_bullseye():
    from scoring import dart_points
    assert dart_points(0, 0) == 10


def test_dart_points_inner_edge():
    from scoring import dart_points
    assert dart_points(1, 0) == 10


def test_dart_points_just_outside_inner():
    from scoring import dart_points
    assert dart_points(1, 1) == 5


def test_dart_points_middle_edge():
    from scoring import dart_points
    assert dart_points(3, 4) == 5


def test_dart_points_just_outside_middle():
    from scoring import dart_points
    assert dart_points(5, 1) == 1


def test_dart_points_outer():
    from scoring import dart_points
    assert dart_points(4, 4) == 1


def test_dart_points_outer_edge():
    from scoring import dart_points
    assert dart_points(6, 8) == 1


def test_dart_points_just_outside_outer():
    from scoring import dart_points
    assert dart_points(1, 10) == 0


def test_dart_points_miss():
    from scoring import dart_points
    assert dart_points(7, 8) == 0


def test_dart_points_negative_miss():
    from scoring import dart_points
    assert dart_points(0, -11) == 0


def test_scrabble_score_empty():
    from scoring import scrabble_score
    assert scrabble_score("") == 0


def test_scrabble_score_cabbage():
    from scoring import scrabble_score
    assert scrabble_score("cabbage") == 14


def test_scrabble_score_quiz():
    from scoring import scrabble_score
    assert scrabble_score("quiz") == 22


def test_scrabble_score_long_word():
    from scoring import scrabble_score
    assert scrabble_score("OxyphenButazone") == 41


def test_scrabble_score_kid():
    from scoring import scrabble_score
    assert scrabble_score("kid") == 8


def test_scrabble_score_punctuation():
    from scoring import scrabble_score
    assert scrabble_score("jog!") == 11


def test_scrabble_score_hyphen():
    from scoring import scrabble_score
    assert scrabble_score("a-b") == 4


def test_dice_hand_yacht():
    from scoring import dice_hand
    assert dice_hand([5, 5, 5, 5, 5]) == "yacht"


def test_dice_hand_four():
    from scoring import dice_hand
    assert dice_hand([2, 2, 2, 2, 3]) == "four"


def test_dice_hand_full_house():
    from scoring import dice_hand
    assert dice_hand([3, 3, 3, 6, 6]) == "full house"


def test_dice_hand_three():
    from scoring import dice_hand
    assert dice_hand([4, 4, 4, 1, 2]) == "three"


def test_dice_hand_two_pair():
    from scoring import dice_hand
    assert dice_hand([1, 1, 2, 2, 6]) == "two pair"


def test_dice_hand_pair():
    from scoring import dice_hand
    assert dice_hand([6, 6, 1, 2, 3]) == "pair"


def test_dice_hand_low_straight():
    from scoring import dice_hand
    assert dice_hand([1, 2, 3, 4, 5]) == "straight"


def test_dice_hand_high_straight():
    from scoring import dice_hand
    assert dice_hand([6, 4, 5, 3, 2]) == "straight"


def test_dice_hand_none():
    from scoring import dice_hand
    assert dice_hand([1, 2, 3, 4, 6]) == "none"


def test_points_percentage_no_games():
    from scoring import points_percentage
    assert points_percentage(0, 0, 0) == 0


def test_points_percentage_one_win():
    from scoring import points_percentage
    assert points_percentage(1, 0, 0) == 100


def test_points_percentage_one_loss():
    from scoring import points_percentage
    assert points_percentage(0, 0, 1) == 0


def test_points_percentage_one_of_each():
    from scoring import points_percentage
    assert points_percentage(1, 1, 1) == 50


def test_points_percentage_one_draw():
    from scoring import points_percentage
    assert points_percentage(0, 1, 0) == 50


def test_points_percentage_rounds_down():
    from scoring import points_percentage
    assert points_percentage(2, 1, 0) == 83


def test_points_percentage_third():
    from scoring import points_percentage
    assert points_percentage(1, 0, 2) == 33


def test_points_percentage_half_rounds_up():
    from scoring import points_percentage
    assert points_percentage(0, 1, 3) == 13


def test_longest_streak_empty():
    from scoring import longest_streak
    assert longest_streak("") == 0


def test_longest_streak_no_wins():
    from scoring import longest_streak
    assert longest_streak("LLL") == 0


def test_longest_streak_last_run():
    from scoring import longest_streak
    assert longest_streak("WWLWWW") == 3


def test_longest_streak_first_run():
    from scoring import longest_streak
    assert longest_streak("WWWLW") == 3


def test_longest_streak_other_symbol():
    from scoring import longest_streak
    assert longest_streak("WLLLD", "L") == 3


def test_longest_streak_single():
    from scoring import longest_streak
    assert longest_streak("W") == 1


def test_competition_ranks_empty():
    from scoring import competition_ranks
    assert competition_ranks([]) == []


def test_competition_ranks_single():
    from scoring import competition_ranks
    assert competition_ranks([10]) == [1]


def test_competition_ranks_descending():
    from scoring import competition_ranks
    assert competition_ranks([30, 20, 10]) == [1, 2, 3]


def test_competition_ranks_ties():
    from scoring import competition_ranks
    assert competition_ranks([10, 20, 20, 5]) == [3, 1, 1, 4]


def test_competition_ranks_all_equal():
    from scoring import competition_ranks
    assert competition_ranks([7, 7, 7]) == [1, 1, 1]


def test_competition_ranks_ascending():
    from scoring import competition_ranks
    assert competition_ranks([1, 2, 3]) == [3, 2, 1]


def test_golf_to_par_no_holes():
    from scoring import golf_to_par
    assert golf_to_par([], []) == "E"


def test_golf_to_par_even():
    from scoring import golf_to_par
    assert golf_to_par([4, 4], [4, 4]) == "E"


def test_golf_to_par_one_over():
    from scoring import golf_to_par
    assert golf_to_par([5, 4], [4, 4]) == "+1"


def test_golf_to_par_two_under():
    from scoring import golf_to_par
    assert golf_to_par([3, 3, 4], [4, 4, 4]) == "-2"


def test_golf_to_par_cancels_out():
    from scoring import golf_to_par
    assert golf_to_par([6, 2], [4, 4]) == "E"


def test_golf_to_par_four_over():
    from scoring import golf_to_par
    assert golf_to_par([7], [3]) == "+4"


def test_average_drop_lowest_empty():
    from scoring import average_drop_lowest
    assert average_drop_lowest([]) == 0


def test_average_drop_lowest_single():
    from scoring import average_drop_lowest
    assert average_drop_lowest([50]) == 0


def test_average_drop_lowest_two_scores():
    from scoring import average_drop_lowest
    assert average_drop_lowest([50, 70]) == 70


def test_average_drop_lowest_three_scores():
    from scoring import average_drop_lowest
    assert average_drop_lowest([10, 20, 30]) == 25


def test_average_drop_lowest_duplicate_max():
    from scoring import average_drop_lowest
    assert average_drop_lowest([1, 2, 2]) == 2


def test_average_drop_lowest_half_rounds_up():
    from scoring import average_drop_lowest
    assert average_drop_lowest([0, 1, 2]) == 2


def test_average_drop_lowest_rounds_down():
    from scoring import average_drop_lowest
    assert average_drop_lowest([0, 1, 1, 2]) == 1


def test_average_drop_lowest_equal_pair():
    from scoring import average_drop_lowest
    assert average_drop_lowest([5, 5]) == 5


@pytest.mark.parametrize(
    "score, expected",
    [(100, "A"), (88, "B+"), (59, "F")],
    ids=["top of A band", "B plus", "just failing"],
)
def test_letter_grade_table(score, expected):
    from scoring import letter_grade
    assert letter_grade(score) == expected
