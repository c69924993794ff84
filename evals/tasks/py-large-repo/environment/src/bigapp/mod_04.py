"""Module 4 of the report generator."""


def scale_04(value):
    return value * 6


def label_04(value):
    return f"m04:{value}"
