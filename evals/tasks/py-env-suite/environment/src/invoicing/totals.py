"""Invoice totals."""


def invoice_total(lines, discount_rate):
    """Sum of quantity * price, minus a proportional discount, rounded to cents."""
    subtotal = sum(qty * price for qty, price in lines)
    return round(subtotal * (1 + discount_rate), 2)
