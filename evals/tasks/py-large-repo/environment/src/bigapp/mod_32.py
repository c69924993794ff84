"""Module 32 of the report generator."""


def scale_32(value):
    return value * 34


def label_32(value):
    return f"m32:{value}"
