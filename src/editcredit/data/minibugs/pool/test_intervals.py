import pytest


def test_overlaps_partial():
    from intervals import overlaps
    assert overlaps((1, 3), (2, 5)) == True


def test_overlaps_touching():
    from intervals import overlaps
    assert overlaps((1, 3), (3, 5)) == True


def test_overlaps_disjoint():
    from intervals import overlaps
    assert overlaps((1, 3), (4, 5)) == False


def test_overlaps_disjoint_reversed():
    from intervals import overlaps
    assert overlaps((4, 5), (1, 3)) == False


def test_overlaps_nested():
    from intervals import overlaps
    assert overlaps((1, 10), (2, 3)) == True


def test_overlaps_touching_left():
    from intervals import overlaps
    assert overlaps((3, 5), (1, 3)) == True


def test_span_length_basic():
    from intervals import span_length
    assert span_length((1, 3)) == 3


def test_span_length_single_point():
    from intervals import span_length
    assert span_length((5, 5)) == 1


def test_span_length_empty():
    from intervals import span_length
    assert span_length((5, 4)) == 0


def test_span_length_negative_start():
    from intervals import span_length
    assert span_length((-2, 2)) == 5


def test_span_length_reversed():
    from intervals import span_length
    assert span_length((3, 1)) == 0


def test_contains_lower_end():
    from intervals import contains
    assert contains((1, 5), 1) == True


def test_contains_upper_end():
    from intervals import contains
    assert contains((1, 5), 5) == True


def test_contains_below():
    from intervals import contains
    assert contains((1, 5), 0) == False


def test_contains_above():
    from intervals import contains
    assert contains((1, 5), 6) == False


def test_contains_closed_inside():
    from intervals import contains
    assert contains((1, 5), 3) == True


def test_contains_open_lower_end():
    from intervals import contains
    assert contains((1, 5), 1, False) == False


def test_contains_open_inside():
    from intervals import contains
    assert contains((1, 5), 3, False) == True


def test_contains_open_upper_end():
    from intervals import contains
    assert contains((1, 5), 5, False) == False


def test_merge_intervals_empty():
    from intervals import merge_intervals
    assert merge_intervals([]) == []


def test_merge_intervals_classic():
    from intervals import merge_intervals
    assert merge_intervals([(1, 3), (2, 6), (8, 10)]) == [(1, 6), (8, 10)]


def test_merge_intervals_touching():
    from intervals import merge_intervals
    assert merge_intervals([(1, 4), (4, 5)]) == [(1, 5)]


def test_merge_intervals_unsorted():
    from intervals import merge_intervals
    assert merge_intervals([(5, 6), (1, 2)]) == [(1, 2), (5, 6)]


def test_merge_intervals_nested():
    from intervals import merge_intervals
    assert merge_intervals([(1, 10), (2, 3)]) == [(1, 10)]


def test_merge_intervals_adjacent_kept():
    from intervals import merge_intervals
    assert merge_intervals([(1, 2), (3, 4)]) == [(1, 2), (3, 4)]


def test_merge_intervals_later_merge():
    from intervals import merge_intervals
    assert merge_intervals([(1, 2), (5, 7), (6, 9)]) == [(1, 2), (5, 9)]


def test_intersection_partial():
    from intervals import intersection
    assert intersection((1, 5), (3, 8)) == (3, 5)


def test_intersection_disjoint():
    from intervals import intersection
    assert intersection((1, 2), (3, 4)) == None


def test_intersection_single_point():
    from intervals import intersection
    assert intersection((1, 3), (3, 4)) == (3, 3)


def test_intersection_nested():
    from intervals import intersection
    assert intersection((2, 9), (4, 5)) == (4, 5)


def test_intersection_disjoint_reversed():
    from intervals import intersection
    assert intersection((5, 6), (1, 2)) == None


def test_covered_points_empty():
    from intervals import covered_points
    assert covered_points([]) == 0


def test_covered_points_single():
    from intervals import covered_points
    assert covered_points([(1, 3)]) == 3


def test_covered_points_overlap():
    from intervals import covered_points
    assert covered_points([(1, 3), (2, 4)]) == 4


def test_covered_points_reversed():
    from intervals import covered_points
    assert covered_points([(5, 4)]) == 0


def test_covered_points_separate():
    from intervals import covered_points
    assert covered_points([(1, 1), (3, 3)]) == 2


def test_find_gaps_no_items():
    from intervals import find_gaps
    assert find_gaps([], 0, 5) == [(0, 5)]


def test_find_gaps_middle():
    from intervals import find_gaps
    assert find_gaps([(2, 3)], 0, 5) == [(0, 1), (4, 5)]


def test_find_gaps_full_cover():
    from intervals import find_gaps
    assert find_gaps([(0, 5)], 0, 5) == []


def test_find_gaps_several():
    from intervals import find_gaps
    assert find_gaps([(1, 2), (4, 4)], 0, 5) == [(0, 0), (3, 3), (5, 5)]


def test_find_gaps_beyond_high():
    from intervals import find_gaps
    assert find_gaps([(2, 3), (10, 12), (20, 21)], 0, 5) == [(0, 1), (4, 5)]


def test_find_gaps_starts_at_low():
    from intervals import find_gaps
    assert find_gaps([(0, 2)], 0, 5) == [(3, 5)]


def test_find_gaps_ends_at_high():
    from intervals import find_gaps
    assert find_gaps([(3, 5)], 0, 5) == [(0, 2)]


def test_find_gaps_item_at_high():
    from intervals import find_gaps
    assert find_gaps([(0, 4), (5, 7)], 0, 5) == []


def test_split_at_middle():
    from intervals import split_at
    assert split_at((1, 5), 3) == [(1, 2), (3, 5)]


def test_split_at_at_start():
    from intervals import split_at
    assert split_at((1, 5), 1) == [(1, 5)]


def test_split_at_at_end():
    from intervals import split_at
    assert split_at((1, 5), 5) == [(1, 4), (5, 5)]


def test_split_at_after_end():
    from intervals import split_at
    assert split_at((1, 5), 6) == [(1, 5)]


def test_split_at_before_start():
    from intervals import split_at
    assert split_at((1, 5), 0) == [(1, 5)]


def test_split_at_second_point():
    from intervals import split_at
    assert split_at((1, 5), 2) == [(1, 1), (2, 5)]


def test_max_depth_empty():
    from intervals import max_depth
    assert max_depth([]) == 0


def test_max_depth_single():
    from intervals import max_depth
    assert max_depth([(1, 2)]) == 1


def test_max_depth_staircase():
    from intervals import max_depth
    assert max_depth([(1, 3), (2, 4), (3, 5)]) == 3


def test_max_depth_disjoint():
    from intervals import max_depth
    assert max_depth([(1, 2), (3, 4)]) == 1


def test_max_depth_touching():
    from intervals import max_depth
    assert max_depth([(1, 2), (2, 3)]) == 2


def test_max_depth_nested():
    from intervals import max_depth
    assert max_depth([(1, 10), (2, 3), (4, 5)]) == 2


def test_max_depth_after_an_end():
    from intervals import max_depth
    assert max_depth([(1, 2), (3, 5), (4, 6), (5, 7)]) == 3


def test_distance_to_below():
    from intervals import distance_to
    assert distance_to((2, 5), 0) == 2


def test_distance_to_above():
    from intervals import distance_to
    assert distance_to((2, 5), 9) == 4


def test_distance_to_inside():
    from intervals import distance_to
    assert distance_to((2, 5), 3) == 0


def test_distance_to_at_start():
    from intervals import distance_to
    assert distance_to((2, 5), 2) == 0


def test_distance_to_at_end():
    from intervals import distance_to
    assert distance_to((2, 5), 5) == 0


def test_distance_to_just_below():
    from intervals import distance_to
    assert distance_to((2, 5), 1) == 1


def test_distance_to_just_above():
    from intervals import distance_to
    assert distance_to((2, 5), 6) == 1


@pytest.mark.parametrize(
    "interval, expected",
    [((0, 2), 3), ((4, 4), 1), ((9, 3), 0)],
    ids=["three points", "single point", "empty interval"],
)
def test_span_length_table(interval, expected):
    from intervals import span_length
    assert span_length(interval) == expected
