"""Module 16 of the report generator."""


def scale_16(value):
    return value * 18


def label_16(value):
    return f"m16:{value}"
