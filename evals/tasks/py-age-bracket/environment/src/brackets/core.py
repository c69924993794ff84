"""Insurance age brackets."""


def in_bracket(age, low, high):
    """True when low <= age < high: the range includes its start and excludes its end."""
    return low < age < high
