import pytest


def test_running_total_empty():
    from listops import running_total
    assert running_total([]) == []


def test_running_total_single():
    from listops import running_total
    assert running_total([5]) == [5]


def test_running_total_basic():
    from listops import running_total
    assert running_total([1, 2, 3]) == [1, 3, 6]


def test_running_total_negatives():
    from listops import running_total
    assert running_total([3, -1, -2]) == [3, 2, 0]


def test_running_total_zeros():
    from listops import running_total
    assert running_total([0, 0]) == [0, 0]


def test_chunk_uneven():
    from listops import chunk
    assert chunk([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]


def test_chunk_empty():
    from listops import chunk
    assert chunk([], 3) == []


def test_chunk_exact():
    from listops import chunk
    assert chunk([1, 2, 3], 3) == [[1, 2, 3]]


def test_chunk_size_one():
    from listops import chunk
    assert chunk([1, 2], 1) == [[1], [2]]


def test_chunk_larger_than_list():
    from listops import chunk
    assert chunk([1, 2], 5) == [[1, 2]]


def test_chunk_zero_size():
    from listops import chunk
    with pytest.raises(ValueError):
        chunk([1], 0)


def test_chunk_negative_size():
    from listops import chunk
    with pytest.raises(ValueError):
        chunk([1], -1)


def test_second_largest_empty():
    from listops import second_largest
    assert second_largest([]) == None


def test_second_largest_single():
    from listops import second_largest
    assert second_largest([4]) == None


def test_second_largest_duplicates_only():
    from listops import second_largest
    assert second_largest([4, 4]) == None


def test_second_largest_basic():
    from listops import second_largest
    assert second_largest([1, 3, 2]) == 2


def test_second_largest_top_repeated():
    from listops import second_largest
    assert second_largest([5, 5, 3]) == 3


def test_second_largest_negatives():
    from listops import second_largest
    assert second_largest([-1, -5, -3]) == -3


def test_second_largest_max_later():
    from listops import second_largest
    assert second_largest([2, 9, 9, 7]) == 7


def test_second_largest_ascending():
    from listops import second_largest
    assert second_largest([1, 2, 3]) == 2


def test_rotate_left_by_one():
    from listops import rotate_left
    assert rotate_left([1, 2, 3, 4], 1) == [2, 3, 4, 1]


def test_rotate_left_full_turn():
    from listops import rotate_left
    assert rotate_left([1, 2, 3], 3) == [1, 2, 3]


def test_rotate_left_beyond_length():
    from listops import rotate_left
    assert rotate_left([1, 2, 3], 4) == [2, 3, 1]


def test_rotate_left_negative():
    from listops import rotate_left
    assert rotate_left([1, 2, 3], -1) == [3, 1, 2]


def test_rotate_left_empty():
    from listops import rotate_left
    assert rotate_left([], 2) == []


def test_rotate_left_zero():
    from listops import rotate_left
    assert rotate_left([1, 2], 0) == [1, 2]


def test_rotate_left_by_two():
    from listops import rotate_left
    assert rotate_left([1, 2, 3, 4], 2) == [3, 4, 1, 2]


def test_rotate_left_pair():
    from listops import rotate_left
    assert rotate_left([1, 2], 1) == [2, 1]


def test_dedupe_empty():
    from listops import dedupe
    assert dedupe([]) == []


def test_dedupe_no_repeats():
    from listops import dedupe
    assert dedupe([1, 2, 3]) == [1, 2, 3]


def test_dedupe_repeats():
    from listops import dedupe
    assert dedupe([3, 1, 3, 2, 1]) == [3, 1, 2]


def test_dedupe_all_same():
    from listops import dedupe
    assert dedupe([7, 7, 7]) == [7]


def test_dedupe_negatives():
    from listops import dedupe
    assert dedupe([-1, 1, -1]) == [-1, 1]


def test_merge_sorted_left_empty():
    from listops import merge_sorted
    assert merge_sorted([], [1, 2]) == [1, 2]


def test_merge_sorted_interleaved():
    from listops import merge_sorted
    assert merge_sorted([1, 3, 5], [2, 4]) == [1, 2, 3, 4, 5]


def test_merge_sorted_right_empty():
    from listops import merge_sorted
    assert merge_sorted([1, 2], []) == [1, 2]


def test_merge_sorted_right_first():
    from listops import merge_sorted
    assert merge_sorted([5, 6], [1, 2]) == [1, 2, 5, 6]


def test_merge_sorted_equal_values():
    from listops import merge_sorted
    assert merge_sorted([1, 1], [1]) == [1, 1, 1]


def test_merge_sorted_both_empty():
    from listops import merge_sorted
    assert merge_sorted([], []) == []


def test_max_subarray_sum_empty():
    from listops import max_subarray_sum
    assert max_subarray_sum([]) == 0


def test_max_subarray_sum_single_negative():
    from listops import max_subarray_sum
    assert max_subarray_sum([-3]) == -3


def test_max_subarray_sum_mixed():
    from listops import max_subarray_sum
    assert max_subarray_sum([1, -2, 3, 4, -1]) == 7


def test_max_subarray_sum_all_negative():
    from listops import max_subarray_sum
    assert max_subarray_sum([-2, -1, -3]) == -1


def test_max_subarray_sum_all_positive():
    from listops import max_subarray_sum
    assert max_subarray_sum([2, 3]) == 5


def test_max_subarray_sum_first_best():
    from listops import max_subarray_sum
    assert max_subarray_sum([5, -9, 4]) == 5


def test_max_subarray_sum_restart():
    from listops import max_subarray_sum
    assert max_subarray_sum([-1, 2, 3]) == 5


def test_count_inversions_empty():
    from listops import count_inversions
    assert count_inversions([]) == 0


def test_count_inversions_sorted():
    from listops import count_inversions
    assert count_inversions([1, 2, 3]) == 0


def test_count_inversions_reversed():
    from listops import count_inversions
    assert count_inversions([3, 2, 1]) == 3


def test_count_inversions_equal_pair():
    from listops import count_inversions
    assert count_inversions([2, 2]) == 0


def test_count_inversions_one_swap():
    from listops import count_inversions
    assert count_inversions([1, 3, 2, 4]) == 1


def test_count_inversions_first_large():
    from listops import count_inversions
    assert count_inversions([4, 1, 2, 3]) == 3


def test_differences_empty():
    from listops import differences
    assert differences([]) == []


def test_differences_single():
    from listops import differences
    assert differences([5]) == []


def test_differences_increasing():
    from listops import differences
    assert differences([1, 4, 9]) == [3, 5]


def test_differences_decreasing():
    from listops import differences
    assert differences([5, 3]) == [-2]


def test_differences_constant():
    from listops import differences
    assert differences([2, 2, 2]) == [0, 0]


def test_longest_increasing_run_empty():
    from listops import longest_increasing_run
    assert longest_increasing_run([]) == 0


def test_longest_increasing_run_single():
    from listops import longest_increasing_run
    assert longest_increasing_run([7]) == 1


def test_longest_increasing_run_prefix():
    from listops import longest_increasing_run
    assert longest_increasing_run([1, 2, 3, 1, 2]) == 3


def test_longest_increasing_run_equal():
    from listops import longest_increasing_run
    assert longest_increasing_run([3, 3, 3]) == 1


def test_longest_increasing_run_decreasing():
    from listops import longest_increasing_run
    assert longest_increasing_run([5, 4, 3]) == 1


def test_longest_increasing_run_suffix():
    from listops import longest_increasing_run
    assert longest_increasing_run([1, 2, 1, 2, 3, 4]) == 4


def test_sign_counts_empty():
    from listops import sign_counts
    assert sign_counts([]) == (0, 0, 0)


def test_sign_counts_one_each():
    from listops import sign_counts
    assert sign_counts([-1, 0, 1]) == (1, 1, 1)


def test_sign_counts_negatives():
    from listops import sign_counts
    assert sign_counts([-3, -2]) == (2, 0, 0)


def test_sign_counts_zeros():
    from listops import sign_counts
    assert sign_counts([0, 0, 5]) == (0, 2, 1)


def test_sign_counts_positive():
    from listops import sign_counts
    assert sign_counts([4]) == (0, 0, 1)


@pytest.mark.parametrize(
    "values, expected",
    [([], []), ([2, 2, 2], [2, 4, 6]), ([5, -5, 1], [5, 0, 1])],
    ids=["empty list", "three items", "mixed signs"],
)
def test_running_total_table(values, expected):
    from listops import running_total
    assert running_total(values) == expected


class TestRotateEdges:
    def test_rotate_left_negative(self):
        from listops import rotate_left
        assert rotate_left([1, 2, 3, 4], -3) == [2, 3, 4, 1]

    def test_rotate_left_single_item(self):
        from listops import rotate_left
        assert rotate_left([9], 5) == [9]
