"""Task success against the real WebArena task configs in ../shared/data/webarena/test.raw.json."""

import json

import pytest

from metrics.definitions import (
    AnswerCheck,
    AnswerQuestion,
    EvaluatorResult,
    UrlCheck,
    site_urls_from_start_url,
    task_success,
    task_success_questions,
)
from metrics.definitions.task_success import NO_REFERENCE

GITLAB = {"__GITLAB__": "http://localhost:8023"}
REDDIT = {"__REDDIT__": "http://localhost:9999"}


@pytest.fixture(scope="module")
def tasks(shared_data):
    entries = json.loads((shared_data / "webarena" / "test.raw.json").read_text(encoding="utf-8"))
    return {entry["task_id"]: entry for entry in entries}


def evaluate(task, final_answer=None, **kwargs):
    return task_success(task["eval"], final_answer=final_answer, **kwargs)


def questions(task, final_answer=None, **kwargs):
    return task_success_questions(task["eval"], final_answer=final_answer, **kwargs)


class TestHarness:
    def test_harness_verdict_wins(self, tasks):
        result = evaluate(tasks[0], "Quest Lumaflex™ Band", harness_success=False)
        assert (result.value, result.source, result.evaluators) == (False, "harness", ())
        assert evaluate(tasks[0], "wrong", harness_success=True).value is True

    def test_no_questions_when_the_harness_decided(self, tasks):
        assert questions(tasks[16], "driving 2 min", harness_success=True) == ()


class TestStringMatch:
    def test_exact_match(self, tasks):
        result = evaluate(tasks[0], "Quest Lumaflex™ Band")
        assert (result.value, result.source) == (True, "string_match")
        assert result.evaluators[0].answer_checks == (AnswerCheck("exact_match", "Quest Lumaflex™ Band", True),)

    def test_exact_match_ignores_case_and_outer_quotes(self, tasks):
        assert evaluate(tasks[0], "  'quest LUMAFLEX™ band' ").value is True
        # The prediction is cleaned twice, as in WebArena: two pairs of quotes go.
        assert evaluate(tasks[0], "\"'Quest Lumaflex™ Band'\"").value is True

    def test_exact_match_fails_on_more_text(self, tasks):
        result = evaluate(tasks[0], "The best seller is Quest Lumaflex™ Band")
        assert (result.value, result.source) == (False, "string_match")

    def test_no_final_answer_fails_string_match(self, tasks):
        assert evaluate(tasks[0], None).value is False

    def test_must_include_needs_every_phrase(self, tasks):
        assert evaluate(tasks[3], "quest lumaflex™ band, sprite stasis ball 65 cm").value is True
        result = evaluate(tasks[3], "Quest Lumaflex™ Band")
        assert result.value is False
        assert result.evaluators[0].answer_checks == (
            AnswerCheck("must_include", "Quest Lumaflex™ Band", True),
            AnswerCheck("must_include", "Sprite Stasis Ball 65 cm", False))

    def test_weak_agent_na_answer_to_a_must_include_task(self, tasks):
        assert evaluate(tasks[6], "'N/A'").value is False

    @pytest.mark.parametrize(
        "answer, expected",
        [("6", True), ("There are 6 reviews.", True), ("(6)", True), ("16", False), ("6.5", False), ("$6", True)],
    )
    def test_single_one_character_reference_must_be_a_whole_word(self, tasks, answer, expected):
        assert tasks[11]["eval"]["reference_answers"] == {"must_include": ["6"]}
        assert evaluate(tasks[11], answer).value is expected

    def test_one_character_reference_in_a_longer_list_is_a_substring(self):
        config = {"eval_types": ["string_match"], "reference_answers": {"must_include": ["6", "pink"]}}
        assert task_success(config, final_answer="16 pink ones").value is True

    def test_fuzzy_match_asks_the_judge_per_reference(self, tasks):
        answer = "Driving takes 2 minutes, walking 16."
        assert questions(tasks[16], answer) == (
            AnswerQuestion("fuzzy_match", "driving: 2min"),
            AnswerQuestion("fuzzy_match", "walking: 16min"),
        )
        passed = evaluate(tasks[16], answer, answer_scores={"driving: 2min": 0.9, "walking: 16min": 0.7})
        assert passed.value is True
        failed = evaluate(tasks[16], answer, answer_scores={"driving: 2min": 0.9, "walking: 16min": 0.2})
        assert failed.value is False
        assert failed.evaluators[0].answer_checks[1] == AnswerCheck("fuzzy_match", "walking: 16min", False, 0.2)

    def test_fuzzy_match_tau_is_a_parameter(self, tasks):
        scores = {"driving: 2min": 0.6, "walking: 16min": 0.6}
        assert evaluate(tasks[16], "2 and 16 min", answer_scores=scores).value is False
        assert evaluate(tasks[16], "2 and 16 min", answer_scores=scores, tau=0.5).value is True

    def test_fuzzy_match_without_an_answer_fails_without_the_judge(self, tasks):
        assert questions(tasks[8], None) == ()
        assert evaluate(tasks[8], None).value is False

    def test_missing_fuzzy_score_is_an_error(self, tasks):
        with pytest.raises(ValueError, match="no judge score for fuzzy_match reference 'walking: 16min'"):
            evaluate(tasks[16], "2 and 16 min", answer_scores={"driving: 2min": 1.0})

    def test_judge_score_outside_unit_range_is_refused(self, tasks):
        with pytest.raises(ValueError, match="reference 'driving: 2min'"):
            evaluate(tasks[16], "2 and 16 min", answer_scores={"driving: 2min": 1.2, "walking: 16min": 1.0})

    def test_judge_is_not_asked_once_a_check_failed(self, tasks):
        assert questions(tasks[34], "The Marriott, 3h 30min away") == ()
        result = evaluate(tasks[34], "The Marriott, 3h 30min away")
        assert result.value is False
        assert result.evaluators[0].answer_checks[1] == AnswerCheck("fuzzy_match", "Time: 3h 30min", None)
        assert questions(tasks[34], "Hyatt Regency Pittsburgh International Airport, 3h 30min") == (
            AnswerQuestion("fuzzy_match", "Time: 3h 30min"),
        )


class TestUnachievableTasks:
    @pytest.mark.parametrize("answer", ["N/A", "n/a", "'N/A'", ' "N/A" '])
    def test_answering_na_passes_without_the_judge(self, tasks, answer):
        assert questions(tasks[22], answer) == ()
        result = evaluate(tasks[22], answer)
        assert result.value is True
        assert result.evaluators[0].answer_checks == (AnswerCheck("unachievable", "N/A", True),)

    def test_another_answer_passes_when_it_gives_the_reason(self, tasks):
        note = "There is no review about under water photo"
        answer = "No reviewer mentions under water photos."
        assert questions(tasks[22], answer) == (AnswerQuestion("unachievable_reason", note),)
        assert evaluate(tasks[22], answer, answer_scores={note: 0.8}).value is True
        assert evaluate(tasks[22], answer, answer_scores={note: 0.3}).value is False

    def test_no_final_answer_asks_about_the_reason(self, tasks):
        note = "There is no review about under water photo"
        assert questions(tasks[22], None) == (AnswerQuestion("unachievable_reason", note),)


class TestUrlMatch:
    LAST = "http://localhost:8023/a11yproject/a11yproject.com/-/issues/?sort=created_asc&state=opened"

    @pytest.mark.parametrize(
        "last_url, expected",
        [
            (LAST, True),
            ("http://localhost:8023/a11yproject/a11yproject.com/-/issues?state=opened&sort=created_asc", True),
            (LAST + "&page=2", True),
            ("http://localhost:8023/a11yproject/a11yproject.com/-/issues/?sort=created_asc&state=closed", False),
            ("http://localhost:8023/a11yproject/a11yproject.com/-/issues/?state=opened", False),
            ("http://localhost:8023/a11yproject/a11yproject.com/-/merge_requests/?sort=created_asc&state=opened",
             False),
        ],
    )
    def test_gold_in_pred(self, tasks, last_url, expected):
        result = evaluate(tasks[45], last_url=last_url, site_urls=GITLAB)
        assert result.value is expected
        assert result.source == "url_match"

    def test_details_show_both_parts(self, tasks):
        check = evaluate(tasks[45], last_url=self.LAST[:-7] + "closed", site_urls=GITLAB).evaluators[0].url_check
        assert (check.host_and_path_match, check.query_match) == (True, False)
        assert check.reference_urls == (self.LAST,)
        assert check.last_url == self.LAST[:-7] + "closed"

    def test_reference_path_contained_in_a_longer_path_passes(self, tasks):
        last_url = "http://localhost:8023/primer/design/-/milestones/new"
        # url_match passes; program_html would need the live site.
        result = evaluate(tasks[590], last_url=last_url, site_urls=GITLAB)
        assert [evaluator.passed for evaluator in result.evaluators] == [True, None]
        assert (result.value, result.source) == (None, "")

    def test_any_of_the_or_alternatives(self, tasks):
        assert evaluate(tasks[604], last_url="http://localhost:9999/f/MachineLearning/83/sota",
                        site_urls=REDDIT).evaluators[0].passed is True
        result = evaluate(tasks[604], last_url="http://localhost:9999/f/technology", site_urls=REDDIT)
        assert (result.value, result.source) == (False, "url_match")

    def test_no_last_url_is_unknown(self, tasks):
        result = evaluate(tasks[45], last_url=None, site_urls=GITLAB)
        assert result.value is None
        assert "no last URL" in result.evaluators[0].note

    def test_placeholder_without_a_site_url_is_unknown(self, tasks):
        result = evaluate(tasks[45], last_url=self.LAST)
        assert result.value is None
        assert result.evaluators[0].note == "no site URL for __GITLAB__"

    def test_string_and_url_match_both_decide(self, tasks):
        last_url = "http://localhost:8023/byteblaze/empathy-prompts/-/issues/8"
        asked = questions(tasks[173], "No, it is still open", last_url=last_url, site_urls=GITLAB)
        assert asked == (AnswerQuestion("fuzzy_match", "No, it is open"),)
        result = evaluate(tasks[173], "No, it is still open", last_url=last_url, site_urls=GITLAB,
                          answer_scores={"No, it is open": 1.0})
        assert (result.value, result.source) == (True, "string+url_match")

    def test_failed_url_match_spares_the_judge(self, tasks):
        last_url = "http://localhost:8023/byteblaze/empathy-prompts/-/issues/9"
        assert questions(tasks[173], "No, it is open", last_url=last_url, site_urls=GITLAB) == ()
        result = evaluate(tasks[173], "No, it is open", last_url=last_url, site_urls=GITLAB)
        assert (result.value, result.source) == (False, "url_match")


class TestUnknown:
    def test_program_html_needs_the_live_site(self, tasks):
        result = evaluate(tasks[118], "")
        assert (result.value, result.source) == (None, "")
        assert result.evaluators[0].note == "program_html needs the live site"
        assert result.null_reason == "the offline check cannot decide: program_html needs the live site"

    def test_no_evaluators_is_unknown(self):
        result = task_success({"eval_types": []}, final_answer="x")
        assert (result.value, result.null_reason) == (None, "the task has no reference answer or URL to check offline")
        assert task_success({}, final_answer="x").null_reason == result.null_reason
        assert task_success({}, final_answer="x", harness_success=True).null_reason == ""


class TestBadConfigs:
    @pytest.mark.parametrize(
        "config, message",
        [
            ({"eval_types": ["screenshot_match"]}, "eval.eval_types: unknown evaluator 'screenshot_match'"),
            ({"eval_types": "string_match"}, "eval.eval_types: expected a list"),
            ({"eval_types": ["string_match"], "reference_answers": {"regex": "x"}},
             "eval.reference_answers.regex: unknown reference answer type"),
            ({"eval_types": ["string_match"], "reference_answers": {"must_include": "x"}},
             "eval.reference_answers.must_include: expected a list of strings"),
            ({"eval_types": ["string_match"], "reference_answers": {"exact_match": ["x"]}},
             "eval.reference_answers.exact_match: expected a string"),
            ({"eval_types": ["url_match"], "reference_url": "__MAP__/x", "url_note": "EXACT"},
             "eval.url_note: unknown URL matching rule 'EXACT'"),
            ({"eval_types": ["url_match"], "reference_url": ""}, "eval.reference_url: url_match needs"),
        ],
    )
    def test_errors_name_the_field(self, config, message):
        with pytest.raises(ValueError, match=message.replace("(", r"\(")):
            task_success(config, final_answer="x", last_url="http://localhost:3000/x")


class TestSiteUrls:
    @pytest.mark.parametrize(
        "config_start_url, resolved_start_url, expected",
        [
            ("__SHOPPING_ADMIN__", "http://localhost:7780/admin",
             {"__SHOPPING_ADMIN__": "http://localhost:7780/admin"}),
            ("__GITLAB__/a11yproject/a11yproject.com", "http://localhost:8023/a11yproject/a11yproject.com", GITLAB),
            ("__REDDIT__", "http://localhost:9999/", REDDIT),
            ("__GITLAB__/primer/design", "http://localhost:8023/byteblaze/dotfiles", {}),
            ("http://localhost:8023", "http://localhost:8023", {}),
            # Only slashes end a site URL; nothing before the placeholder's rest is no site URL.
            ("__SHOPPING_ADMIN__/", "http://shop.test/ADMINX/", {"__SHOPPING_ADMIN__": "http://shop.test/ADMINX"}),
            ("__REDDIT__/forums", "/forums", {}),
        ],
    )
    def test_site_url_from_a_start_url_written_both_ways(self, config_start_url, resolved_start_url, expected):
        assert site_urls_from_start_url(config_start_url, resolved_start_url) == expected

    def test_sample_render_header_resolves_task_0(self, tasks):
        # The render file's header has the start URL resolved to the harness's host.
        site_urls = site_urls_from_start_url(tasks[0]["start_url"], "http://localhost:7780/admin")
        assert site_urls == {"__SHOPPING_ADMIN__": "http://localhost:7780/admin"}


def test_details_store_as_json(tasks):
    result = evaluate(tasks[173], "No", last_url="http://localhost:8023/byteblaze/empathy-prompts/-/issues/8",
                      site_urls=GITLAB, answer_scores={"No, it is open": 0.4})
    details = result.to_dict()
    assert json.loads(json.dumps(details)) == details
    assert details["evaluators"][1]["url_check"]["reference_urls"] == [
        "http://localhost:8023/byteblaze/empathy-prompts/-/issues/8"
    ]
    assert details["evaluators"][0]["answer_checks"][0] == {
        "approach": "fuzzy_match", "reference": "No, it is open", "passed": False, "judge_score": 0.4,
    }


def _url_result(reference: str, last_url: str | None, site_urls=None):
    config = {"eval_types": ["url_match"], "reference_url": reference, "url_note": "GOLD in PRED"}
    [result] = task_success(config, final_answer=None, last_url=last_url, site_urls=site_urls).evaluators
    return result


class TestUrlMatchWhole:
    def test_without_a_last_url_or_a_site_url_it_cannot_decide_and_says_why(self):
        assert _url_result("http://h/a", None) == EvaluatorResult("url_match", None,
                                                                   note="the trajectory has no last URL")
        assert _url_result("__A__/x |OR| __B__/y", "http://h/x") == EvaluatorResult(
            "url_match", None, note="no site URL for __A__, __B__")

    def test_references_split_on_or_lose_trailing_slashes(self):
        result = _url_result("http://h/MAX/ |OR| http://h/b//", "http://h/b/c")
        assert result == EvaluatorResult("url_match", True, url_check=UrlCheck(
            "http://h/b/c", ("http://h/MAX", "http://h/b"), True, True))

    def test_the_last_urls_trailing_slash_goes_before_its_query_is_read(self):
        assert _url_result("http://h/a?x=1", "http://h/a?x=1/").passed is True
        assert _url_result("http://h/a?x=X", "http://h/a?x=X/").passed is True
        assert _url_result("http://h/a?x=1", "http://h/a?x=2").passed is False

    def test_host_and_path_lose_only_slashes(self):
        assert _url_result("http://h/aX", "http://h/a").passed is False
        assert _url_result("http://h/a/", "http://h/a").passed is True


class TestWholeResults:
    def test_tau_is_kept_whatever_decided(self):
        string = {"eval_types": ["string_match"], "reference_answers": {"exact_match": "a"}}
        assert task_success(string, final_answer="a", harness_success=True, tau=0.6).tau == 0.6
        assert task_success(string, final_answer="b", tau=0.6).tau == 0.6
        assert task_success(string, final_answer="a", tau=0.6).tau == 0.6
        assert task_success({"eval_types": ["program_html"]}, final_answer="a", tau=0.6).tau == 0.6

    def test_no_evaluator_is_no_value_from_no_source(self):
        assert task_success({"eval_types": []}, final_answer="a", tau=0.6).to_dict() == {
            "value": None, "source": "", "evaluators": [], "tau": 0.6, "null_reason": NO_REFERENCE}

    def test_every_undecided_evaluator_says_why(self):
        config = {"eval_types": ["program_html", "url_match"], "reference_url": "http://h/a"}
        result = task_success(config, final_answer="a")
        assert result.evaluators[0] == EvaluatorResult("program_html", None, note="program_html needs the live site")
        assert (result.value, result.source, result.null_reason) == (
            None, "", "the offline check cannot decide: program_html needs the live site; "
                      "the trajectory has no last URL")

    def test_fuzzy_references_without_an_answer_fail_but_a_blank_one_and_need_a_list(self):
        config = {"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": ["a", ""]}}
        [evaluator] = task_success(config, final_answer=None).evaluators
        assert evaluator.answer_checks == (AnswerCheck("fuzzy_match", "a", False), AnswerCheck("fuzzy_match", "", True))
        with pytest.raises(ValueError) as raised:
            task_success({"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": "a"}}, final_answer="x")
        assert str(raised.value) == "eval.reference_answers.fuzzy_match: expected a list of strings, got 'a'"

    def test_an_unachievable_task_without_a_note_asks_about_an_empty_reason(self):
        config = {"eval_types": ["string_match"], "reference_answers": {"fuzzy_match": "N/A"}}
        assert task_success_questions(config, final_answer="no") == (AnswerQuestion("unachievable_reason", ""),)


def test_an_agent_response_evaluator_named_but_not_given_is_refused():
    with pytest.raises(ValueError) as raised:
        task_success({"eval_types": ["AgentResponseEvaluator"], "evaluators": []}, final_answer="x")
    assert str(raised.value) == "eval.evaluators: no AgentResponseEvaluator entry"
