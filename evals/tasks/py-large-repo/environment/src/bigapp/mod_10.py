"""Module 10 of the report generator."""


def scale_10(value):
    return value * 12


def label_10(value):
    return f"m10:{value}"
