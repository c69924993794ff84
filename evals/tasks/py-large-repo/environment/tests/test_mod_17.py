from bigapp.mod_17 import over_quota, scale_17


def test_quota_reached_is_over():
    assert over_quota(100, 100) is True


def test_scale():
    assert scale_17(2) == 38
