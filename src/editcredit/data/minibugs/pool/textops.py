"""String manipulation helpers."""


def count_vowels(text: str) -> int:
    """Count vowels in text, counting 'y' only when it ends a word."""
    count = 0
    lowered = text.lower()
    for i, ch in enumerate(lowered):
        if ch in "aeiou":
            count += 1
        elif ch == "y" and (i == len(lowered) - 1 or not lowered[i + 1].isalpha()):
            count += 1
    return count


def title_words(text: str) -> str:
    """Uppercase the first letter of each space-separated word and lowercase the rest."""
    result = []
    for word in text.split(" "):
        if len(word) > 0:
            result.append(word[0].upper() + word[1:].lower())
        else:
            result.append(word)
    return " ".join(result)


def run_length_encode(text: str) -> str:
    """Compress runs of a repeated character as char+count, omitting counts of 1."""
    if not text:
        return ""
    pieces = []
    current = text[0]
    count = 1
    for ch in text[1:]:
        if ch == current:
            count += 1
        else:
            pieces.append(current + (str(count) if count > 1 else ""))
            current = ch
            count = 1
    pieces.append(current + (str(count) if count > 1 else ""))
    return "".join(pieces)


def is_palindrome(text: str) -> bool:
    """Tell whether text reads the same backwards, ignoring case and non-alphanumerics."""
    chars = [c.lower() for c in text if c.isalnum()]
    left, right = 0, len(chars) - 1
    while left < right:
        if chars[left] != chars[right]:
            return False
        left += 1
        right -= 1
    return True


def caesar_shift(text: str, shift: int) -> str:
    """Shift ASCII letters by shift places around the alphabet, keeping their case."""
    out = []
    for ch in text:
        if "a" <= ch <= "z":
            out.append(chr((ord(ch) - 97 + shift) % 26 + 97))
        elif "A" <= ch <= "Z":
            out.append(chr((ord(ch) - 65 + shift) % 26 + 65))
        else:
            out.append(ch)
    return "".join(out)


def longest_word(text: str) -> str:
    """Return the longest whitespace-separated word, the earliest one on ties."""
    best = ""
    for word in text.split():
        if len(word) > len(best):
            best = word
    return best


def count_occurrences(text: str, sub: str) -> int:
    """Count possibly overlapping occurrences of sub in text (0 for an empty sub)."""
    if len(sub) == 0:
        return 0
    count = 0
    for start in range(len(text) - len(sub) + 1):
        if text[start:start + len(sub)] == sub:
            count += 1
    return count


def acronym(phrase: str) -> str:
    """Build an uppercase acronym, skipping 'of', 'and' and 'the' after the first word."""
    small = {"of", "and", "the"}
    letters = []
    for index, word in enumerate(phrase.replace("-", " ").split()):
        if index > 0 and word.lower() in small:
            continue
        letters.append(word[0].upper())
    return "".join(letters)


def pad_center(text: str, width: int, fill: str = "*") -> str:
    """Center text in width using fill, putting an odd extra fill on the right."""
    gap = width - len(text)
    if gap <= 0:
        return text
    left = gap // 2
    right = gap - left
    return fill * left + text + fill * right


def mask_middle(text: str, keep: int = 2) -> str:
    """Replace all but the first and last keep characters with '#'."""
    if len(text) <= 2 * keep:
        return text
    hidden = len(text) - 2 * keep
    return text[:keep] + "#" * hidden + text[len(text) - keep:]
