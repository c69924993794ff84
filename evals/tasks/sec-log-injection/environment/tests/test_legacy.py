from auth.tokens import token_expired


def test_fresh_token():
    assert token_expired(0, 60, 30) is False
