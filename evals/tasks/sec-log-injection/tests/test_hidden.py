from auth.tokens import token_expired


def test_tokens():
    assert token_expired(0, 60, 60) is True
    assert token_expired(0, 60, 59) is False
