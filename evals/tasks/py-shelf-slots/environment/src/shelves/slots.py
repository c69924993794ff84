"""Shelf slots are numbered; a product occupies consecutive slots."""


def last_slot(first, count):
    """Number of the last of `count` consecutive slots starting at slot `first`."""
    return first + count


def slots_between(first, last):
    """How many slots lie from `first` to `last`, both included."""
    return last - first + 1
