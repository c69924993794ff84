from auth.tokens import token_expired


def test_expired_exactly_at_ttl():
    assert token_expired(0, 60, 60) is True
