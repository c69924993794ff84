"""Module 5 of the report generator."""


def scale_05(value):
    return value * 7


def label_05(value):
    return f"m05:{value}"
