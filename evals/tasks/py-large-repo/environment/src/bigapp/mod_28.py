"""Module 28 of the report generator."""


def scale_28(value):
    return value * 30


def label_28(value):
    return f"m28:{value}"
