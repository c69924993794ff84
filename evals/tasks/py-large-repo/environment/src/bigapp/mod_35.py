"""Module 35 of the report generator."""


def scale_35(value):
    return value * 37


def label_35(value):
    return f"m35:{value}"
