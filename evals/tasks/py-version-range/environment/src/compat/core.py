"""Which Python versions a release supports."""


def supports(version, oldest, newest):
    """True when oldest <= version < newest: the range includes its start and excludes its end."""
    return oldest < version < newest
