"""Ratios and percentages."""


def ratio(part, whole):
    return part / whole


def percent(part, whole):
    """`part` as a percentage of `whole`."""
    return ratio(whole, part) * 100
