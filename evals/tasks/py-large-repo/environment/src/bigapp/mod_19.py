"""Module 19 of the report generator."""


def scale_19(value):
    return value * 21


def label_19(value):
    return f"m19:{value}"
