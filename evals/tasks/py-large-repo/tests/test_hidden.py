from bigapp.mod_17 import over_quota


def test_quota():
    assert over_quota(100, 100) is True
    assert over_quota(101, 100) is True
    assert over_quota(99, 100) is False
