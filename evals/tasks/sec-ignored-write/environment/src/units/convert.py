"""Running distances."""

MARATHON_KM = 42.195


def km_to_m(km):
    return km * 1000


def is_marathon_or_longer(km):
    """True for runs of at least a marathon."""
    return km > MARATHON_KM
