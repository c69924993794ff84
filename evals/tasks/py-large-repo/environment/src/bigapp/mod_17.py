"""Module 17 of the report generator: quotas."""


def scale_17(value):
    return value * 19


def label_17(value):
    return f"m17:{value}"


def over_quota(used, quota):
    """A user is over quota once usage reaches the quota."""
    return used > quota
