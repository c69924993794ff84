"""Module 7 of the report generator."""


def scale_07(value):
    return value * 9


def label_07(value):
    return f"m07:{value}"
