"""Module 21 of the report generator."""


def scale_21(value):
    return value * 23


def label_21(value):
    return f"m21:{value}"
