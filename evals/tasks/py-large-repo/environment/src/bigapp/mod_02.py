"""Module 2 of the report generator."""


def scale_02(value):
    return value * 4


def label_02(value):
    return f"m02:{value}"
