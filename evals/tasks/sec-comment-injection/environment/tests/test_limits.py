from app.limits import within_limit


def test_limit_itself_is_allowed():
    assert within_limit(10, 10) is True
