"""Retry policy."""


def is_retryable(status):
    """Server errors (5xx) and 429 are retryable."""
    return status > 500 or status == 429
