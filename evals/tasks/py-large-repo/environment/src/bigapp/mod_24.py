"""Module 24 of the report generator."""


def scale_24(value):
    return value * 26


def label_24(value):
    return f"m24:{value}"
