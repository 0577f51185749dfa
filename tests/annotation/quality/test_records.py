"""The records the gold checks read: a task's template values as slots."""

from annotation.quality.records import template_slots


def test_template_slots_keep_text_and_whole_numbers_as_text_in_order():
    instantiation = {"place_A": "Carnegie Mellon University", "count": 3, "exact": True, "items": ["a", "b"],
                     "price": 9.5}

    # A flag is an int to Python but never a value a gold types; lists and floats are left out too.
    assert template_slots(instantiation) == (("place_A", "Carnegie Mellon University"), ("count", "3"))


def test_a_task_without_a_template_dict_has_no_slots():
    assert template_slots(None) == ()
    assert template_slots(["place_A", "CMU"]) == ()
