"""Module 33 of the report generator."""


def scale_33(value):
    return value * 35


def label_33(value):
    return f"m33:{value}"
