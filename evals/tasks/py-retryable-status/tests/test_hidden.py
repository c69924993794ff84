from netkit.retry import is_retryable


def test_policy():
    assert [is_retryable(s) for s in (500, 503, 429, 404, 200)] == [True, True, True, False, False]
