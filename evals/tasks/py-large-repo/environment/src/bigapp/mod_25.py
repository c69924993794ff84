"""Module 25 of the report generator."""


def scale_25(value):
    return value * 27


def label_25(value):
    return f"m25:{value}"
