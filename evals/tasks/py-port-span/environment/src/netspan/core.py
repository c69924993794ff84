"""Whether a port lies in a reserved span."""


def in_span(port, first, stop):
    """True when first <= port < stop: the range includes its start and excludes its end."""
    return first < port < stop
