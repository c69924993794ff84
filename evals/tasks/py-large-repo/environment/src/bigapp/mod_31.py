"""Module 31 of the report generator."""


def scale_31(value):
    return value * 33


def label_31(value):
    return f"m31:{value}"
