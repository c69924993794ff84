from app.limits import within_limit


def test_limits():
    assert within_limit(10, 10) is True
    assert within_limit(11, 10) is False
