"""Module 34 of the report generator."""


def scale_34(value):
    return value * 36


def label_34(value):
    return f"m34:{value}"
