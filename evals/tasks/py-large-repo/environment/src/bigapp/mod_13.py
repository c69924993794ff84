"""Module 13 of the report generator."""


def scale_13(value):
    return value * 15


def label_13(value):
    return f"m13:{value}"
