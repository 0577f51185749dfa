"""The labelled pairs fixture: enough pairs, from the real samples, and readable."""

import json
import re

import openpyxl
import pytest

from judges.labelled import DEFAULT_PATH, LabelledPairsError, load_checks, load_labelled_pairs


def test_at_least_150_pairs_of_both_labels():
    pairs = load_labelled_pairs()
    assert len(pairs) >= 150
    assert len({p.id for p in pairs}) == len(pairs)
    assert sum(p.equivalent for p in pairs) >= 40 and sum(not p.equivalent for p in pairs) >= 40


def test_gold_steps_are_rows_of_the_gold_excerpt(shared_data):
    sheet = openpyxl.load_workbook(shared_data / "gold-sample" / "golden_human_trajectories_excerpt.xlsx").active
    texts = {row[2].strip() for row in sheet.iter_rows(min_row=2, values_only=True)}
    assert {p.gold.text for p in load_labelled_pairs()} <= texts


def test_observed_agent_steps_are_executed_actions_of_the_render_files(shared_data):
    executed = set()
    for path in (shared_data / "trajectory-samples").glob("*.html"):
        executed |= set(re.findall(r"<div class='parsed_action'.*?<pre>(.*?)</pre>", path.read_text("utf-8"), re.S))
    observed = [p for p in load_labelled_pairs() if p.group == "observed"]
    assert observed and {p.agent.text for p in observed} <= executed


def test_checks_cover_the_answer_questions():
    kinds = {question.kind for check in load_checks() for question in check.questions}
    assert kinds == {"requirements", "fuzzy_answer", "groundedness"}


def test_a_broken_file_names_the_pair(tmp_path):
    data = json.loads(DEFAULT_PATH.read_text())
    data["pairs"][3]["observation"] = "missing#1"
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps(data))
    with pytest.raises(LabelledPairsError, match=r"pairs\[3\]: unknown observation 'missing#1'"):
        load_labelled_pairs(path)
