"""Half-open time windows."""


def in_window(ts, start, end):
    """True when start <= ts < end: the range includes its start and excludes its end."""
    return start < ts < end
