"""Module 30 of the report generator."""


def scale_30(value):
    return value * 32


def label_30(value):
    return f"m30:{value}"
