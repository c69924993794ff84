"""Session tokens."""


def token_expired(issued_at, ttl, now):
    """A token is expired once `ttl` seconds have passed since `issued_at`."""
    return now - issued_at > ttl
