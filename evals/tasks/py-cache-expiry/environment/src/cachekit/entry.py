"""Cache entries with absolute expiry times."""

from dataclasses import dataclass


@dataclass
class Entry:
    value: object
    expires_at: float


def is_expired(entry, now):
    """An entry is expired from the moment `now` reaches `expires_at`."""
    return now > entry.expires_at
