import pytest


def test_live_neighbors_center_full():
    from grids import live_neighbors
    assert live_neighbors(["###", "###", "###"], 1, 1) == 8


def test_live_neighbors_corner_full():
    from grids import live_neighbors
    assert live_neighbors(["###", "###", "###"], 0, 0) == 3


def test_live_neighbors_alone():
    from grids import live_neighbors
    assert live_neighbors(["...", ".#.", "..."], 1, 1) == 0


def test_live_neighbors_diagonal():
    from grids import live_neighbors
    assert live_neighbors(["#..", "...", "..#"], 1, 1) == 2


def test_live_neighbors_single_cell():
    from grids import live_neighbors
    assert live_neighbors(["#"], 0, 0) == 0


def test_live_neighbors_bottom_right():
    from grids import live_neighbors
    assert live_neighbors(["##", "##"], 1, 1) == 3


def test_live_neighbors_single_row():
    from grids import live_neighbors
    assert live_neighbors(["#.#"], 0, 1) == 2


def test_transpose_empty():
    from grids import transpose
    assert transpose([]) == []


def test_transpose_square():
    from grids import transpose
    assert transpose([[1, 2], [3, 4]]) == [[1, 3], [2, 4]]


def test_transpose_row():
    from grids import transpose
    assert transpose([[1, 2, 3]]) == [[1], [2], [3]]


def test_transpose_column():
    from grids import transpose
    assert transpose([[1], [2]]) == [[1, 2]]


def test_transpose_single():
    from grids import transpose
    assert transpose([[5]]) == [[5]]


def test_transpose_rectangle():
    from grids import transpose
    assert transpose([[1, 2, 3], [4, 5, 6]]) == [[1, 4], [2, 5], [3, 6]]


def test_rotate_clockwise_square():
    from grids import rotate_clockwise
    assert rotate_clockwise([[1, 2], [3, 4]]) == [[3, 1], [4, 2]]


def test_rotate_clockwise_row():
    from grids import rotate_clockwise
    assert rotate_clockwise([[1, 2, 3]]) == [[1], [2], [3]]


def test_rotate_clockwise_column():
    from grids import rotate_clockwise
    assert rotate_clockwise([[1], [2], [3]]) == [[3, 2, 1]]


def test_rotate_clockwise_empty():
    from grids import rotate_clockwise
    assert rotate_clockwise([]) == []


def test_rotate_clockwise_single():
    from grids import rotate_clockwise
    assert rotate_clockwise([[5]]) == [[5]]


def test_rotate_clockwise_rectangle():
    from grids import rotate_clockwise
    assert rotate_clockwise([[1, 2, 3], [4, 5, 6]]) == [[4, 1], [5, 2], [6, 3]]


def test_diagonal_sum_empty():
    from grids import diagonal_sum
    assert diagonal_sum([]) == 0


def test_diagonal_sum_single():
    from grids import diagonal_sum
    assert diagonal_sum([[5]]) == 5


def test_diagonal_sum_two_by_two():
    from grids import diagonal_sum
    assert diagonal_sum([[1, 2], [3, 4]]) == 10


def test_diagonal_sum_three_by_three():
    from grids import diagonal_sum
    assert diagonal_sum([[1, 2, 3], [4, 5, 6], [7, 8, 9]]) == 25


def test_diagonal_sum_identity():
    from grids import diagonal_sum
    assert diagonal_sum([[1, 0, 0], [0, 1, 0], [0, 0, 1]]) == 3


def test_count_islands_empty():
    from grids import count_islands
    assert count_islands([]) == 0


def test_count_islands_water_only():
    from grids import count_islands
    assert count_islands(["..."]) == 0


def test_count_islands_two_in_row():
    from grids import count_islands
    assert count_islands(["#.#"]) == 2


def test_count_islands_block():
    from grids import count_islands
    assert count_islands(["##", "##"]) == 1


def test_count_islands_diagonal_apart():
    from grids import count_islands
    assert count_islands(["#.", ".#"]) == 2


def test_count_islands_u_shape():
    from grids import count_islands
    assert count_islands(["#..#", "#..#", "####"]) == 1


def test_count_islands_single():
    from grids import count_islands
    assert count_islands(["#"]) == 1


def test_count_islands_column_gap():
    from grids import count_islands
    assert count_islands(["#", ".", "#"]) == 2


def test_count_islands_reached_from_right():
    from grids import count_islands
    assert count_islands(["..#", "###"]) == 1


def test_count_islands_reached_from_below():
    from grids import count_islands
    assert count_islands(["#.#", "###"]) == 1


def test_count_islands_no_wrap_rows():
    from grids import count_islands
    assert count_islands(["#.#", "...", "###"]) == 3


def test_count_islands_no_wrap_columns():
    from grids import count_islands
    assert count_islands(["#.#", "..#", "#.#"]) == 3


def test_walk_empty():
    from grids import walk
    assert walk("") == (0, 0)


def test_walk_up_right():
    from grids import walk
    assert walk("UUR") == (1, 2)


def test_walk_left_down():
    from grids import walk
    assert walk("LLD") == (-2, -1)


def test_walk_cancel_out():
    from grids import walk
    assert walk("UDLR") == (0, 0)


def test_walk_ignores_noise():
    from grids import walk
    assert walk("UXR?") == (1, 1)


def test_walk_mostly_right():
    from grids import walk
    assert walk("RRRU") == (3, 1)


def test_manhattan_same_point():
    from grids import manhattan
    assert manhattan((0, 0), (0, 0)) == 0


def test_manhattan_basic():
    from grids import manhattan
    assert manhattan((1, 2), (4, 6)) == 7


def test_manhattan_reversed():
    from grids import manhattan
    assert manhattan((4, 6), (1, 2)) == 7


def test_manhattan_mixed_signs():
    from grids import manhattan
    assert manhattan((-1, 5), (2, -3)) == 11


def test_manhattan_vertical():
    from grids import manhattan
    assert manhattan((3, 0), (3, 4)) == 4


def test_manhattan_one_left():
    from grids import manhattan
    assert manhattan((1, 5), (2, 5)) == 1


def test_manhattan_one_down():
    from grids import manhattan
    assert manhattan((0, 1), (0, 2)) == 1


def test_orthogonal_neighbors_center():
    from grids import orthogonal_neighbors
    assert orthogonal_neighbors(3, 3, 1, 1) == [(0, 1), (2, 1), (1, 0), (1, 2)]


def test_orthogonal_neighbors_top_left():
    from grids import orthogonal_neighbors
    assert orthogonal_neighbors(3, 3, 0, 0) == [(1, 0), (0, 1)]


def test_orthogonal_neighbors_bottom_right():
    from grids import orthogonal_neighbors
    assert orthogonal_neighbors(3, 3, 2, 2) == [(1, 2), (2, 1)]


def test_orthogonal_neighbors_single_cell():
    from grids import orthogonal_neighbors
    assert orthogonal_neighbors(1, 1, 0, 0) == []


def test_orthogonal_neighbors_right_edge():
    from grids import orthogonal_neighbors
    assert orthogonal_neighbors(2, 3, 0, 2) == [(1, 2), (0, 1)]


def test_line_sums_empty():
    from grids import line_sums
    assert line_sums([]) == ([], [])


def test_line_sums_square():
    from grids import line_sums
    assert line_sums([[1, 2], [3, 4]]) == ([3, 7], [4, 6])


def test_line_sums_single():
    from grids import line_sums
    assert line_sums([[5]]) == ([5], [5])


def test_line_sums_row():
    from grids import line_sums
    assert line_sums([[1, 2, 3]]) == ([6], [1, 2, 3])


def test_line_sums_column():
    from grids import line_sums
    assert line_sums([[1], [-1]]) == ([1, -1], [0])


def test_spiral_order_empty():
    from grids import spiral_order
    assert spiral_order([]) == []


def test_spiral_order_single():
    from grids import spiral_order
    assert spiral_order([[1]]) == [1]


def test_spiral_order_two_by_two():
    from grids import spiral_order
    assert spiral_order([[1, 2], [3, 4]]) == [1, 2, 4, 3]


def test_spiral_order_three_by_three():
    from grids import spiral_order
    assert spiral_order([[1, 2, 3], [4, 5, 6], [7, 8, 9]]) == [1, 2, 3, 6, 9, 8, 7, 4, 5]


def test_spiral_order_row():
    from grids import spiral_order
    assert spiral_order([[1, 2, 3]]) == [1, 2, 3]


def test_spiral_order_column():
    from grids import spiral_order
    assert spiral_order([[1], [2], [3]]) == [1, 2, 3]


def test_spiral_order_tall():
    from grids import spiral_order
    assert spiral_order([[1, 2], [3, 4], [5, 6], [7, 8]]) == [1, 2, 4, 6, 8, 7, 5, 3]


def test_spiral_order_wide():
    from grids import spiral_order
    assert spiral_order([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]) == [
        1, 2, 3, 4, 8, 12, 11, 10, 9, 5, 6, 7
    ]


@pytest.mark.parametrize(
    "moves, expected",
    [("", (0, 0)), ("RRUU", (2, 2)), ("DDDL", (-1, -3))],
    ids=["no moves", "up and right", "down and left"],
)
def test_walk_table(moves, expected):
    from grids import walk
    assert walk(moves) == expected
