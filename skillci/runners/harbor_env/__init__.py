"""Harbor environments skillci provides (loaded by Harbor's interpreter: no skillci imports)."""
