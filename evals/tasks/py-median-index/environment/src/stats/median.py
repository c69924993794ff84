"""Order statistics."""


def median_index(n):
    """Index of the lower median of `n` sorted items."""
    return (n - 1) / 2


def lower_median(items):
    ordered = sorted(items)
    return ordered[median_index(len(ordered))]
