"""Module 11 of the report generator."""


def scale_11(value):
    return value * 13


def label_11(value):
    return f"m11:{value}"
