"""Helpers for 2-D grids: lists of strings or rectangular lists of lists."""


def live_neighbors(grid: list[str], row: int, col: int) -> int:
    """Count '#' cells among the eight neighbours of (row, col)."""
    count = 0
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            if dr == 0 and dc == 0:
                continue
            r, c = row + dr, col + dc
            if 0 <= r < len(grid) and 0 <= c < len(grid[r]) and grid[r][c] == "#":
                count += 1
    return count


def transpose(matrix: list[list[int]]) -> list[list[int]]:
    """Swap the rows and columns of a rectangular matrix."""
    if not matrix:
        return []
    return [[matrix[r][c] for r in range(len(matrix))] for c in range(len(matrix[0]))]


def rotate_clockwise(matrix: list[list[int]]) -> list[list[int]]:
    """Rotate a rectangular matrix a quarter turn clockwise."""
    rows = len(matrix)
    if rows == 0:
        return []
    cols = len(matrix[0])
    return [[matrix[rows - 1 - r][c] for r in range(rows)] for c in range(cols)]


def diagonal_sum(matrix: list[list[int]]) -> int:
    """Sum both diagonals of a square matrix, counting a shared centre once."""
    n = len(matrix)
    total = 0
    for i in range(n):
        total += matrix[i][i]
        j = n - 1 - i
        if j != i:
            total += matrix[i][j]
    return total


def count_islands(grid: list[str]) -> int:
    """Count the groups of '#' cells connected up, down, left or right."""
    seen = set()
    islands = 0
    for r in range(len(grid)):
        for c in range(len(grid[r])):
            if grid[r][c] != "#" or (r, c) in seen:
                continue
            islands += 1
            stack = [(r, c)]
            seen.add((r, c))
            while stack:
                y, x = stack.pop()
                for ny, nx in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
                    inside = 0 <= ny < len(grid) and 0 <= nx < len(grid[ny])
                    if inside and grid[ny][nx] == "#" and (ny, nx) not in seen:
                        seen.add((ny, nx))
                        stack.append((ny, nx))
    return islands


def walk(moves: str) -> tuple[int, int]:
    """Follow U/D/L/R moves from (0, 0), ignoring other letters, and return (x, y)."""
    x = y = 0
    for m in moves:
        if m == "U":
            y += 1
        elif m == "D":
            y -= 1
        elif m == "R":
            x += 1
        elif m == "L":
            x -= 1
    return (x, y)


def manhattan(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Return the Manhattan distance between two grid points."""
    dx = a[0] - b[0]
    dy = a[1] - b[1]
    if dx < 0:
        dx = -dx
    if dy < 0:
        dy = -dy
    return dx + dy


def orthogonal_neighbors(rows: int, cols: int, r: int, c: int) -> list[tuple[int, int]]:
    """List the in-bounds neighbours of (r, c) in up, down, left, right order."""
    result = []
    for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
        nr, nc = r + dr, c + dc
        if 0 <= nr < rows and 0 <= nc < cols:
            result.append((nr, nc))
    return result


def line_sums(matrix: list[list[int]]) -> tuple[list[int], list[int]]:
    """Return the (row sums, column sums) of a rectangular matrix."""
    rows = [0] * len(matrix)
    cols = [0] * (len(matrix[0]) if matrix else 0)
    for r, row in enumerate(matrix):
        for c, value in enumerate(row):
            rows[r] += value
            cols[c] += value
    return (rows, cols)


def spiral_order(matrix: list[list[int]]) -> list[int]:
    """Read a rectangular matrix clockwise in a spiral from the top-left corner."""
    result = []
    top, bottom = 0, len(matrix) - 1
    left, right = 0, (len(matrix[0]) - 1 if matrix else -1)
    while top <= bottom and left <= right:
        for c in range(left, right + 1):
            result.append(matrix[top][c])
        for r in range(top + 1, bottom + 1):
            result.append(matrix[r][right])
        if top < bottom:
            for c in range(right - 1, left - 1, -1):
                result.append(matrix[bottom][c])
        if left < right:
            for r in range(bottom - 1, top, -1):
                result.append(matrix[r][left])
        top, bottom, left, right = top + 1, bottom - 1, left + 1, right - 1
    return result
