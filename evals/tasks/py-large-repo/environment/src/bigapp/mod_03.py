"""Module 3 of the report generator."""


def scale_03(value):
    return value * 5


def label_03(value):
    return f"m03:{value}"
