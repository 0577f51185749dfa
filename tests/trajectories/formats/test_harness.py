import pytest

from trajectories.formats.canonical import TrajectoryFormatError
from trajectories.formats.harness import parse_harness_config, parse_results


def test_result_lines_from_harness_logs():
    log = (
        "2024-05-01 10:00:00,001 - INFO - [Config file]: config_files/3.json\n"
        "2024-05-01 10:01:00,001 - INFO - [Result] (FAIL) config_files/3.json\n"
        "[Result] (PASS) config_files/0.json\n"
        "[Result] PASS /home/me/webarena/config_files/44.json\n"
        "[Result] (PASS) config_files/3.json\n"
        "[Unhandled Error] ValueError\n"
    )
    assert parse_results(log) == {"3": True, "0": True, "44": True}
    assert parse_results("no results here") == {}


def test_run_config_keeps_model_and_prompt_but_not_credentials():
    config = parse_harness_config({
        "model": "gpt-4-turbo-2024-04-09", "instruction_path": "agents/prompts/jsons/p_cot_id_actree_2s.json",
        "max_steps": 30, "openai_api_key": "sk-secret", "hf_token": "x",
    })
    assert config.model == "gpt-4-turbo-2024-04-09"
    assert config.prompt == "agents/prompts/jsons/p_cot_id_actree_2s.json"
    assert config.arguments == {"model": "gpt-4-turbo-2024-04-09", "max_steps": 30,
                                "instruction_path": "agents/prompts/jsons/p_cot_id_actree_2s.json"}
    with pytest.raises(TrajectoryFormatError):
        parse_harness_config(["not", "an", "object"])
