"""Module 39 of the report generator."""


def scale_39(value):
    return value * 41


def label_39(value):
    return f"m39:{value}"
