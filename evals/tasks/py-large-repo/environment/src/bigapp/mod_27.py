"""Module 27 of the report generator."""


def scale_27(value):
    return value * 29


def label_27(value):
    return f"m27:{value}"
