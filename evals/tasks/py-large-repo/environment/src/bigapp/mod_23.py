"""Module 23 of the report generator."""


def scale_23(value):
    return value * 25


def label_23(value):
    return f"m23:{value}"
