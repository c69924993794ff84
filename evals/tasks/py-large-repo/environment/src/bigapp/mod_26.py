"""Module 26 of the report generator."""


def scale_26(value):
    return value * 28


def label_26(value):
    return f"m26:{value}"
