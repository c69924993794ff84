"""Module 14 of the report generator."""


def scale_14(value):
    return value * 16


def label_14(value):
    return f"m14:{value}"
