"""What a step says: its folded wording, the values it quotes and types, whether a text holds a value."""

from annotation.quality.step_text import fold_case_and_spacing, holds, is_typing, quoted_values, typed_values


def test_wordings_fold_case_runs_of_whitespace_and_end_punctuation():
    assert fold_case_and_spacing("  Click \t 'Reports'.\n") == "click 'reports'"
    assert fold_case_and_spacing("Done?!") == "done"


def test_a_value_is_held_as_whole_words_of_three_characters_or_more():
    text = fold_case_and_spacing("Go to the zoo, then to Zoology")
    assert holds(text, "Zoo")  # exactly three characters, as a whole word
    assert not holds(text, "to")  # two characters say nothing
    assert not holds(text, "zoolog")  # part of a word
    assert holds(text, "zoology.")  # folded as the text is


def test_typed_values_are_the_quoted_values_of_a_typing_step_but_not_its_field():
    step = "Type 'Harvard University' into the 'To' textbox"
    assert quoted_values(step) == ["Harvard University", "To"]
    assert is_typing(step) and typed_values(step) == ["Harvard University"]
    assert not is_typing("Click the 'Go' button") and typed_values("Click the 'Go' button") == []
