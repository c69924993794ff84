"""Module 9 of the report generator."""


def scale_09(value):
    return value * 11


def label_09(value):
    return f"m09:{value}"
