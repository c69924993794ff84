"""Module 15 of the report generator."""


def scale_15(value):
    return value * 17


def label_15(value):
    return f"m15:{value}"
