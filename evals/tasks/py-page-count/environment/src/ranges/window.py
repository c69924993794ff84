"""Fixed-size windows over a sequence of indices."""


def window_end(start, size):
    """Index of the last element of a window of `size` elements starting at `start`."""
    return start + size - 1


def window_of(index, size):
    """Start index of the window of `size` that contains `index`."""
    return index - index % size
