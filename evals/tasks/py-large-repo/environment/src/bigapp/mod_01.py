"""Module 1 of the report generator."""


def scale_01(value):
    return value * 3


def label_01(value):
    return f"m01:{value}"
