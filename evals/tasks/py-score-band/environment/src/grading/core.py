"""Which grade band an exam score falls in."""


def in_band(score, floor, ceiling):
    """True when floor <= score < ceiling: the range includes its start and excludes its end."""
    return floor < score < ceiling
