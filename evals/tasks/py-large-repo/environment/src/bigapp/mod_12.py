"""Module 12 of the report generator."""


def scale_12(value):
    return value * 14


def label_12(value):
    return f"m12:{value}"
