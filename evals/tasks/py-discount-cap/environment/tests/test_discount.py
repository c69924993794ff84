from pricing.discount import apply_discount


def test_ten_percent():
    assert apply_discount(200, 10) == 180
