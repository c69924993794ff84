"""Which price tier an item belongs to."""


def in_tier(price, lowest, highest):
    """True when lowest <= price < highest: the range includes its start and excludes its end."""
    return lowest < price < highest
