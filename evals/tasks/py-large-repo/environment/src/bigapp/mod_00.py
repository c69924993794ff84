"""Module 0 of the report generator."""


def scale_00(value):
    return value * 2


def label_00(value):
    return f"m00:{value}"
