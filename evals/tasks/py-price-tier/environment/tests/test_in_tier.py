from tiers.core import in_tier


def test_start_is_inside():
    assert in_tier(100, 100, 500) is True


def test_end_is_outside():
    assert in_tier(500, 100, 500) is False


def test_middle_is_inside():
    assert in_tier(250, 100, 500) is True
