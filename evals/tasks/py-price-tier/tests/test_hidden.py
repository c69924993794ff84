from tiers.core import in_tier


def test_half_open():
    assert in_tier(100, 100, 500) is True
    assert in_tier(500, 100, 500) is False
    assert in_tier(99, 100, 500) is False
