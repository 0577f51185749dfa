"""The fit checks: one hand-built case of each kind they must find, against the 812 real intents."""

from annotation.formats import read_gold_file
from annotation.quality import GoldRecord, check_gold
from annotation.services.gold_checks import FIT_KINDS
from tests.annotation.sheets import gold_records


MAP_GOLD = ("Click on the 'Find directions between two points'",
            "Type 'Massachusetts Institute of Technology' into the 'From' textbox.",
            "Type 'Harvard University' into the 'To' textbox.", "Select the 'Foot (OSRM)' option",
            "Click the 'Go' button", "Select the 'Car (OSRM)' option",
            "Type 'Boston Logan International Airport' into the 'To' textbox.", "Click the 'Go' button")


def _fit_flags(tasks, golds):
    return [(f.gold_pk, f.kind, f.related_task_pk, f.related_gold_pk, f.message)
            for f in check_gold(tasks, golds) if f.kind in FIT_KINDS]


def test_a_directions_block_between_places_the_intent_never_names_is_the_worse_version(webarena_intents):
    unnamed = GoldRecord(2, 82, ("Click on the 'Find directions between two points'",
                                         "Type 'Quincy Market' into the 'From' textbox.",
                                         "Type 'Jamaica Pond' into the 'To' textbox.", "Click the 'Go' button"))

    [(gold, kind, task, other, message)] = _fit_flags(webarena_intents, [GoldRecord(1, 82, MAP_GOLD), unnamed])

    assert (gold, kind, task, other) == (2, "worse_version", None, 1)
    assert "it types ‘Quincy Market’, ‘Jamaica Pond’, which the intent never names" in message
    assert "‘harvard’" in message  # what the other block has that this one lacks


def test_a_template_siblings_place_typed_is_flagged_naming_that_sibling(webarena_intents):
    # Task 81 walks from Univ of Pittsburgh; this gold walks from task 80's Carnegie Mellon University.
    places = {"Massachusetts Institute of Technology": "Carnegie Mellon University",
              "Harvard University": "starbucks on Craig Street",
              "Boston Logan International Airport": "Pittsburgh International Airport"}
    steps = tuple(next((text.replace(old, new) for old, new in places.items() if old in text), text)
                  for text in MAP_GOLD)

    [(gold, kind, task, _, message)] = _fit_flags(webarena_intents, [GoldRecord(1, 81, steps)])

    assert (kind, task) == ("sibling_values", 80)
    assert message == ("types ‘Carnegie Mellon University’, the place_A of task 80 (same template), "
                       "and never ‘Univ of Pittsburgh’ that its own intent names")
    # The same gold under its own task is fine.
    assert _fit_flags(webarena_intents, [GoldRecord(1, 80, steps)]) == []


def test_a_single_row_clicking_an_unrelated_link_fits_its_task_poorly(webarena_intents):
    [(gold, kind, task, _, message)] = _fit_flags(webarena_intents, [
        GoldRecord(1, 809, ("Click on the 'Contact Us' link",))])

    assert kind == "poor_fit"
    assert message.startswith("fits its own task 809 poorly (word fit 0.0 (no word of it), similarity")
    assert "intents fit its steps better, the closest task" in message


def test_a_block_browsing_furniture_by_price_under_a_review_task_names_the_furniture_task(webarena_intents):
    block = ("Click on the 'Home & Kitchen' link", "Click on the 'Furniture' link", "Click on the 'Price' filter",
             "Click on the '$100.00 - $199.99' link")

    [(gold, kind, task, _, message)] = _fit_flags(webarena_intents, [GoldRecord(1, 775, block)])

    # Task 273: "Show me products under $199 in "furtiture with accent" category".
    assert (kind, task) == ("other_task", 273)
    assert "word fit 6.7 (‘199.99’)" in message  # $199.99 counted once, by its rarest part


def test_fit_flags_carry_a_confidence_the_surer_the_higher(webarena_intents, gold_xlsx):
    golds = gold_records(read_gold_file(gold_xlsx))
    # Under tasks without a gold of their own: the whole refund message under a bestseller question, and a
    # link that a refund message would need but that is clicked under another task.
    moved = [GoldRecord(100, 4, golds[-1].steps),
             GoldRecord(101, 6, golds[-1].steps[:1] + ("Click on the 'Contact Us' link",))]

    confidence = {f.gold_pk: f.confidence for f in check_gold(webarena_intents, golds + moved)
                  if f.kind in FIT_KINDS}

    assert set(confidence) == {100, 101}
    assert 0.5 < confidence[101] < confidence[100] <= 1.0
