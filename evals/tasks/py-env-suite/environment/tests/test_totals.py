from invoicing.totals import invoice_total


def test_discount_applied():
    assert invoice_total([(2, 10.0), (1, 5.0)], 0.2) == 20.0
