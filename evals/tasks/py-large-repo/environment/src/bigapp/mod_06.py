"""Module 6 of the report generator."""


def scale_06(value):
    return value * 8


def label_06(value):
    return f"m06:{value}"
