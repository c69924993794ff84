from cachekit.entry import Entry, is_expired


def test_expired_at_deadline():
    assert is_expired(Entry("v", expires_at=10), now=10) is True


def test_fresh_before_deadline():
    assert is_expired(Entry("v", expires_at=10), now=9) is False
