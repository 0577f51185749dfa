"""Each question's answer schema: the prompt's reply format, the JSON schema sent, and the reading
(strict but for the spellings whose meaning is one), without Django."""

import pytest

from judges import questions as q
from judges import schema
from judges.outcome_questions import KEY_POINTS, SCREENSHOT, VERDICT
from judges.prompts import load_prompt
from judges.schema import MalformedAnswer


@pytest.mark.parametrize(("kind", "data", "bounds", "message"), [
    (KEY_POINTS, {"key_points": []}, {}, "key_points must be a list of 1 to 10 items, not 0"),
    # Blank items are left out while one is left; none left, the first blank one is named.
    (KEY_POINTS, {"key_points": [" ", ""]}, {}, r"key_points\[0\] must be a non-empty string, not ' '"),
    (SCREENSHOT, {"relevance": 6, "reasoning": ""}, {}, "relevance must be a whole number from 1 to 5, not 6"),
    (SCREENSHOT, {"relevance": 4.5}, {}, "relevance must be a whole number from 1 to 5, not 4.5"),
    (SCREENSHOT, {"relevance": True}, {}, "relevance must be a whole number from 1 to 5, not True"),
    (VERDICT, {"success": "yes", "reasoning": ""}, {}, "success must be true or false, not 'yes'"),
    (VERDICT, {"success": True, "reasoning": 3}, {}, "reasoning must be a string, not 3"),
    (VERDICT, ["success"], {}, "answer must be a JSON object, not"),
    (q.ELEMENT_AT_POINT, {"intended": True}, {}, "element must be a non-empty string, not missing"),
    (q.ELEMENT_AT_POINT, {"element": "  ", "intended": True}, {}, "element must be a non-empty string"),
    (q.ELEMENT_AT_POINT, {"element": "button 'Go'", "intended": "sure"}, {}, "intended must be true or false"),
    (q.STEP_MATCH, {"score": 3}, {}, "score must be a number from 0 to 1, not 3"),
    (q.STEP_MATCH, {"score": "high"}, {}, "score must be a number from 0 to 1, not 'high'"),
    (q.STEP_MATCH, {"score": None}, {}, "score must be a number from 0 to 1, not None"),
    (q.GROUNDEDNESS, {"grounded": 1, "relevant": {"score": 1}}, {}, "grounded must be a JSON object, not 1"),
    (q.REPETITION, {"answers": [{"number": 3, "score": 1}, {"number": 1, "score": 0}]}, {"count": 2},
     r"answers\[0\].number must be a whole number from 1 to 2, not 3"),
    (q.REPETITION, {"answers": [{"number": 1, "score": 1}]}, {"count": 2}, "answers must be a list of 2 items, not 1"),
    (q.REPETITION, {"scores": [1, 0]}, {"count": 2}, "answers must be a list of 2 items, not missing"),
    (q.TRAJECTORY_MATCH, {"pairs": [{"gold": 2, "agent": 1, "score": 1}]},
     {"gold": [1, 3], "agent_count": 4, "most_pairs": 8},
     r"pairs\[0\].gold must be one of the numbers 1, 3, not 2"),
    (q.TRAJECTORY_MATCH, {"pairs": [{"gold": 1, "agent": 5, "score": 1}]},
     {"gold": [1], "agent_count": 4, "most_pairs": 4},
     r"pairs\[0\].agent must be a whole number from 1 to 4, not 5"),
])
def test_an_answer_that_does_not_fit_its_schema_is_malformed_with_the_field_named(kind, data, bounds, message):
    with pytest.raises(MalformedAnswer, match=message):
        schema.read(kind, data, bounds)


def test_well_formed_answers_are_read_as_they_are_and_nothing_is_said_coerced():
    assert schema.read(KEY_POINTS, {"key_points": [" cheapest ", "under $50"]}) == schema.Reading(
        {"key_points": ["cheapest", "under $50"]})
    assert schema.read(VERDICT, {"success": False}).value == {"success": False, "reasoning": ""}
    assert schema.read(q.STEP_MATCH, {"score": 1, "rationale": "Same."}) == schema.Reading(
        {"score": 1.0, "rationale": "Same."})


def test_spellings_with_one_meaning_are_read_as_meant_and_recorded():
    reading = schema.read(q.REPETITION, {"answers": {"number": "1", "score": "0.5", "rationale": "x"}}, {"count": 1})
    assert reading.value == {"answers": [{"number": 1, "score": 0.5, "rationale": "x"}]}
    assert reading.coerced == ("answers: a single item read as a list of one", "answers[0].number: '1' read as 1",
                               "answers[0].score: '0.5' read as 0.5")
    verdict = schema.read(VERDICT, {"success": " TRUE ", "reasoning": "ok"})
    assert verdict == schema.Reading({"success": True, "reasoning": "ok"}, ("success: ' TRUE ' read as true",))
    assert schema.read(SCREENSHOT, {"relevance": 4.0}).value["relevance"] == 4
    assert schema.read(KEY_POINTS, {"key_points": "the cheapest"}).value == {"key_points": ["the cheapest"]}
    fenced = schema.parse(q.STEP_MATCH, '```json\n{"score": 1, "rationale": "Same."}\n```')
    assert fenced.coerced == ("the JSON was read from inside a code fence",)
    written_as_is = schema.parse(KEY_POINTS, '{"key_points": ["the cheapest\tone", "sorted\nby price"]}')
    assert written_as_is.value == {"key_points": ["the cheapest\tone", "sorted\nby price"]}
    assert written_as_is.coerced == ("control characters inside strings were read as written",)
    with_a_blank = schema.read(KEY_POINTS, {"key_points": ["the cheapest", "\n    ", "in red"]})
    assert with_a_blank == schema.Reading({"key_points": ["the cheapest", "in red"]},
                                          ("key_points: 1 blank item(s) left out",))


@pytest.mark.parametrize(("kind", "data"), [
    (VERDICT, {"success": "yes"}),       # yes is not a JSON boolean's spelling
    (VERDICT, {"success": 1}),           # a number for a boolean: which?
    (q.STEP_MATCH, {"score": True}),             # a boolean for a number
    (q.STEP_MATCH, {"score": "1/2"}),
    (SCREENSHOT, {"relevance": "4.5"}),  # not whole
])
def test_ambiguous_spellings_stay_malformed(kind, data):
    with pytest.raises(MalformedAnswer):
        schema.read(kind, data)


def test_a_reply_that_is_not_json_is_malformed():
    with pytest.raises(MalformedAnswer, match="the reply is not JSON"):
        schema.parse(q.STEP_MATCH, "The score is 1.")


def test_every_prompt_shows_the_reply_format_of_its_schema_and_the_schema_is_versioned():
    for kind in schema.ANSWERS:
        prompt = load_prompt(kind)
        assert schema.reply_format(kind) in prompt.system and "$answer_format" not in prompt.system
    assert '{"score": <number from 0 to 1>, "rationale": "<one sentence>"}' in load_prompt(q.STEP_MATCH).system
    assert '{"success": true or false, "reasoning": ' in load_prompt(VERDICT).system


def test_the_json_schema_is_strict_and_bounded_by_the_request():
    bounds = {"gold": [2, 5], "agent_count": 3, "most_pairs": 6}
    sent = schema.json_schema(q.TRAJECTORY_MATCH, bounds, grammar=False)
    pairs = sent["properties"]["pairs"]
    assert sent["required"] == ["pairs", "rationale"] and sent["additionalProperties"] is False
    assert pairs["maxItems"] == 6 and pairs["items"]["properties"]["gold"] == {"type": "integer", "enum": [2, 5]}
    assert pairs["items"]["properties"]["agent"] == {"type": "integer", "minimum": 1, "maximum": 3}
    assert sent["properties"]["rationale"] == {"type": "string"}  # OpenAI's strict mode takes no string lengths
    listed = schema.json_schema(q.REQUIREMENTS, {"count": 3}, grammar=False)["properties"]["answers"]
    assert (listed["minItems"], listed["maxItems"]) == (3, 3)


def test_the_schema_for_a_grammar_spells_out_what_a_grammar_can_enforce():
    sent = schema.json_schema(q.TRAJECTORY_MATCH, {"gold": [2, 5], "agent_count": 3, "most_pairs": 6})
    pair = sent["properties"]["pairs"]["items"]["properties"]
    assert pair["agent"] == {"type": "integer", "enum": [1, 2, 3]}
    assert pair["score"]["enum"] == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    assert sent["properties"]["rationale"] == {"type": "string", "maxLength": schema.RATIONALE_CHARS}
    # Numbered answers as a tuple: each number once, in order.
    listed = schema.json_schema(q.REQUIREMENTS, {"count": 2})["properties"]["answers"]
    assert listed["items"] is False
    assert [item["properties"]["number"] for item in listed["prefixItems"]] == [{"const": 1}, {"const": 2}]
    assert schema.json_schema(SCREENSHOT)["properties"]["relevance"] == {
        "type": "integer", "enum": [1, 2, 3, 4, 5]}
