from shelves.slots import last_slot


def test_last_slot_inclusive():
    assert last_slot(0, 1) == 0
    assert last_slot(5, 3) == 7
    assert last_slot(10, 10) == 19
