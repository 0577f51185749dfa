"""The labelled pairs fixture: enough pairs, from the real samples, and readable."""

import json
import re
import subprocess
import sys

import openpyxl
import pytest

from judges import questions as q
from judges.backends import BackendSpec, make_backend
from judges.calibration import agreement
from judges.labelled import DEFAULT_PATH, MUTATED_PATH, LabelledPairsError, load_checks, load_labelled_pairs


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


def test_the_mutated_pairs_are_what_the_generator_writes():
    script = DEFAULT_PATH.parent.parent / "benchmarks" / "make_judge_pairs.py"
    result = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_the_mutated_pairs_split_by_gold_step_into_tune_and_test(shared_data):
    pairs = load_labelled_pairs(MUTATED_PATH)
    raw = {p["id"]: p for p in json.loads(MUTATED_PATH.read_text(encoding="utf-8"))["pairs"]}
    for split in ("tune", "test"):
        part = [p for p in pairs if p.split == split]
        assert len(part) >= 250
        assert 60 <= sum(not p.equivalent for p in part) <= len(part) - 60
    seeds = {split: {raw[p.id]["seed"] for p in pairs if p.split == split} for split in ("tune", "test")}
    assert not seeds["tune"] & seeds["test"]
    sheet = openpyxl.load_workbook(shared_data / "gold-sample" / "golden_human_trajectories_excerpt.xlsx").active
    rows = {row[2].strip() for row in sheet.iter_rows(min_row=2, values_only=True)}
    assert {p.gold.text for p in pairs if p.group == "as written"} <= rows


def test_a_split_must_be_tune_or_test(tmp_path):
    data = json.loads(MUTATED_PATH.read_text(encoding="utf-8"))
    data["pairs"][2]["split"] = "train"
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps(data))
    with pytest.raises(LabelledPairsError, match=r"pairs\[2\]: `split` must be one of tune, test, not 'train'"):
        load_labelled_pairs(path)


def test_the_offline_judge_agrees_with_the_test_split():
    """The number BENCHMARKS.md reports (kappa >= 0.98 on the part no rule was tuned on)."""
    test = [p for p in load_labelled_pairs(MUTATED_PATH) if p.split == "test"]
    answers = make_backend(BackendSpec("offline")).answer([q.step_match(p.gold, p.agent) for p in test])
    result = agreement([(a.score, 1.0 if p.equivalent else 0.0) for p, a in zip(test, answers)])
    assert result.kappa >= 0.98
