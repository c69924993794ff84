"""Module 18 of the report generator."""


def scale_18(value):
    return value * 20


def label_18(value):
    return f"m18:{value}"
