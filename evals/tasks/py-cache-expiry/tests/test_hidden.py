from cachekit.entry import Entry, is_expired


def test_expiry_boundary():
    assert is_expired(Entry(1, 10), 10) is True
    assert is_expired(Entry(1, 10), 11) is True
    assert is_expired(Entry(1, 10), 9.99) is False
