"""Module 36 of the report generator."""


def scale_36(value):
    return value * 38


def label_36(value):
    return f"m36:{value}"
