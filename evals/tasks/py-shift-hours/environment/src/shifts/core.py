"""Whether an hour of the day falls in a work shift."""


def on_shift(hour, begin, finish):
    """True when begin <= hour < finish: the range includes its start and excludes its end."""
    return begin < hour < finish
