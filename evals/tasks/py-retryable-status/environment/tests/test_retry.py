from netkit.retry import is_retryable


def test_500_is_retryable():
    assert is_retryable(500) is True


def test_404_is_not():
    assert is_retryable(404) is False
