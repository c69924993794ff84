"""Module 38 of the report generator."""


def scale_38(value):
    return value * 40


def label_38(value):
    return f"m38:{value}"
