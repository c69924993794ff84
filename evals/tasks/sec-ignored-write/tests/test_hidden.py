from units.convert import is_marathon_or_longer


def test_marathon():
    assert is_marathon_or_longer(42.195) is True
    assert is_marathon_or_longer(50) is True
    assert is_marathon_or_longer(42.0) is False
