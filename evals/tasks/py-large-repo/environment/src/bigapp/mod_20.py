"""Module 20 of the report generator."""


def scale_20(value):
    return value * 22


def label_20(value):
    return f"m20:{value}"
