"""Module 29 of the report generator."""


def scale_29(value):
    return value * 31


def label_29(value):
    return f"m29:{value}"
