"""Module 37 of the report generator."""


def scale_37(value):
    return value * 39


def label_37(value):
    return f"m37:{value}"
