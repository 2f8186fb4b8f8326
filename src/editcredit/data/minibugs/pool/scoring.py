"""Scoring rules for games and grades."""


def bowling_score(rolls: list[int]) -> int:
    """Score a complete ten-pin bowling game from its list of rolls."""
    score = 0
    i = 0
    for _ in range(10):
        if rolls[i] == 10:
            score += 10 + rolls[i + 1] + rolls[i + 2]
            i += 1
        elif rolls[i] + rolls[i + 1] == 10:
            score += 10 + rolls[i + 2]
            i += 2
        else:
            score += rolls[i] + rolls[i + 1]
            i += 2
    return score


def tennis_call(p1: int, p2: int) -> str:
    """Describe a tennis game from the points won by each player."""
    names = ["love", "15", "30", "40"]
    if p1 >= 3 and p2 >= 3:
        if p1 == p2:
            return "deuce"
        if abs(p1 - p2) == 1:
            return "advantage p1" if p1 > p2 else "advantage p2"
        return "game p1" if p1 > p2 else "game p2"
    if p1 >= 4:
        return "game p1"
    if p2 >= 4:
        return "game p2"
    return names[p1] + "-" + names[p2]


def letter_grade(score: int) -> str:
    """Map a 0-100 score to A-F, adding '+' to B, C or D when the units digit is 7-9."""
    if score >= 90:
        return "A"
    if score < 60:
        return "F"
    letter = "D" if score < 70 else ("C" if score < 80 else "B")
    if score % 10 >= 7:
        return letter + "+"
    return letter


def dart_points(x: int, y: int) -> int:
    """Score a dart at (x, y): 10 within radius 1, 5 within 5, 1 within 10, else 0."""
    d2 = x * x + y * y
    if d2 <= 1:
        return 10
    if d2 <= 25:
        return 5
    if d2 <= 100:
        return 1
    return 0


def scrabble_score(word: str) -> int:
    """Score a word with Scrabble letter values; other characters score nothing."""
    values = {"aeioulnstr": 1, "dg": 2, "bcmp": 3, "fhvwy": 4, "k": 5, "jx": 8, "qz": 10}
    total = 0
    for ch in word.lower():
        for letters, points in values.items():
            if ch in letters:
                total += points
    return total


def dice_hand(dice: list[int]) -> str:
    """Name the best pattern in five dice, from 'yacht' down to 'none'."""
    counts = sorted((dice.count(v) for v in set(dice)), reverse=True)
    if counts[0] == 5:
        return "yacht"
    if counts[0] == 4:
        return "four"
    if counts == [3, 2]:
        return "full house"
    if counts[0] == 3:
        return "three"
    if counts[:2] == [2, 2]:
        return "two pair"
    if counts[0] == 2:
        return "pair"
    if max(dice) - min(dice) == 4:
        return "straight"
    return "none"


def points_percentage(wins: int, draws: int, losses: int) -> int:
    """Return the percent of available points earned (win 2, draw 1), rounded half up."""
    games = wins + draws + losses
    if games == 0:
        return 0
    earned = 2 * wins + draws
    return (earned * 100 + games) // (2 * games)


def longest_streak(results: str, symbol: str = "W") -> int:
    """Return the length of the longest run of symbol in a results string."""
    best = current = 0
    for r in results:
        if r == symbol:
            current += 1
            if current > best:
                best = current
        else:
            current = 0
    return best


def competition_ranks(scores: list[int]) -> list[int]:
    """Return '1224'-style ranks for scores (higher is better), in input order."""
    ranks = []
    for s in scores:
        better = 0
        for other in scores:
            if other > s:
                better += 1
        ranks.append(better + 1)
    return ranks


def golf_to_par(strokes: list[int], pars: list[int]) -> str:
    """Summarise total strokes against par as 'E', '+n' or '-n'."""
    diff = 0
    for s, p in zip(strokes, pars):
        diff += s - p
    if diff == 0:
        return "E"
    if diff > 0:
        return "+" + str(diff)
    return str(diff)


def average_drop_lowest(scores: list[int]) -> int:
    """Average scores after dropping the single lowest, rounded half up (0 if under two)."""
    if len(scores) < 2:
        return 0
    total = sum(scores) - min(scores)
    count = len(scores) - 1
    return (2 * total + count) // (2 * count)
