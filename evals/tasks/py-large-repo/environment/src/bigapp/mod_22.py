"""Module 22 of the report generator."""


def scale_22(value):
    return value * 24


def label_22(value):
    return f"m22:{value}"
