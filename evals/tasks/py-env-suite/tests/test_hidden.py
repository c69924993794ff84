from invoicing.totals import invoice_total


def test_totals():
    assert invoice_total([(2, 10.0), (1, 5.0)], 0.2) == 20.0
    assert invoice_total([(1, 100.0)], 0.0) == 100.0
