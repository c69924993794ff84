"""Discounts."""


def apply_discount(price, pct):
    """Price after a `pct` percent discount; discounts are capped at 50 percent."""
    pct = min(pct, 50)
    return price * (100 + pct) / 100
