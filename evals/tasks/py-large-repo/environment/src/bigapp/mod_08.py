"""Module 8 of the report generator."""


def scale_08(value):
    return value * 10


def label_08(value):
    return f"m08:{value}"
