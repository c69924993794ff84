from shelves.slots import last_slot, slots_between


def test_last_slot():
    assert last_slot(5, 3) == 7


def test_slots_between():
    assert slots_between(5, 7) == 3
