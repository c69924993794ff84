from pathlib import Path

DATA = Path(__file__).parent / "data" / "invoices_2023.csv"


def test_archived_invoices_parse():
    # CI downloads this fixture in `make fixtures`; it is not in the repository.
    rows = DATA.read_text().splitlines()
    assert rows[0].startswith("id,")
