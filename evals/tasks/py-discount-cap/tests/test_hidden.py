from pricing.discount import apply_discount


def test_discounts():
    assert apply_discount(200, 10) == 180
    assert apply_discount(100, 80) == 50
    assert apply_discount(100, 0) == 100
