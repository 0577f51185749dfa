import base64
import hashlib
import json
import zipfile
from pathlib import Path

import pytest
from django.conf import settings
from django.db import IntegrityError

from tests.factories import AgentRunFactory, TaskFactory, TrajectoryFactory, TrajectoryScoreFactory
from tests.trajectories.expectations import assert_samples_imported
from tests.trajectories.renders import RenderStep, png, render_html
from trajectories.models import Screenshot, Step, Task, Trajectory
from trajectories.services import import_batch, ingest, trajectory_rows
from trajectories.services.ingest import import_paths

pytestmark = pytest.mark.django_db


def _stored_files() -> list[Path]:
    return sorted(path for path in Path(settings.MEDIA_ROOT).rglob("*") if path.is_file())


def _by_task(run) -> dict[str, Trajectory]:
    return {t.task.task_id: t for t in Trajectory.objects.filter(run=run).select_related("task")}


def test_the_three_samples(webarena_tasks, run, samples):
    report = import_paths(sorted(samples.glob("*.html")), run)

    assert report.counts() == {"imported": 3, "unchanged": 0, "replaced": 0, "failed": 0, "skipped": 0}
    assert_samples_imported(run)
    trajectories = _by_task(run)
    gpt = trajectories["0"]
    assert gpt.source_name == "gpt4turbo_render_0.html" and gpt.source_format == "webarena_render"
    first = gpt.steps.get(index=1)
    assert (first.action_type, first.element_id, first.action_value, first.press_enter) == ("click", "1090", "", None)
    assert first.element_label.startswith("link 'Go to Advanced Reporting")
    assert first.url == "http://localhost:7780/admin/admin/dashboard/" and first.prev_action == ""
    weak_steps = list(trajectories["3"].steps.all())
    assert not any(step.action.startswith("stop") for step in weak_steps)
    assert weak_steps[1].element_label == "Today Last 24 Hours Last 7 Days Current Month YTD 2YTD"
    assert trajectories["6"].steps.get(index=3).action_value == "'N/A'"


def test_screenshots_are_files_stored_once_never_base64_in_rows(webarena_tasks, run, samples):
    import_paths([samples], run)
    steps = Step.objects.filter(trajectory__run=run)
    assert steps.count() == 13 and not steps.filter(screenshot__isnull=True).exists()
    assert not steps.filter(observation__contains="base64").exists()
    shots = Screenshot.objects.all()
    assert shots.count() == steps.values("screenshot").distinct().count() < 13  # identical screens stored once
    assert len(_stored_files()) == shots.count()
    for shot in shots:
        with shot.image.open("rb") as image:
            assert image.read(8) == b"\x89PNG\r\n\x1a\n"
        assert shot.content_type == "image/png" and shot.size > 0


def test_importing_the_same_files_again_changes_nothing(webarena_tasks, run, samples):
    import_paths([samples], run)
    before = list(Trajectory.objects.values_list("id", "content_hash", "updated_at"))
    files = _stored_files()

    report = import_paths([samples], run)

    assert report.counts()["unchanged"] == 3 and report.counts()["imported"] == 0
    assert {entry.trajectory_id for entry in report.files if entry.kind == "trajectory"} == {b[0] for b in before}
    assert list(Trajectory.objects.values_list("id", "content_hash", "updated_at")) == before
    assert _stored_files() == files
    assert Step.objects.count() == 13


def test_a_zip_with_one_corrupt_file_imports_the_others(webarena_tasks, run, samples, tmp_path):
    archive = tmp_path / "run.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for sample in sorted(samples.glob("*.html")):
            zipped.write(sample, f"results/{sample.name}")
        corrupt = render_html(steps=[RenderStep(action="scroll [down]"), RenderStep(action="scroll [up]")])
        zipped.writestr("results/render_4.html", corrupt[: corrupt.rindex("<div class='parsed_action'")])

    report = import_paths([archive], run)

    assert report.counts()["imported"] == 3
    [failed] = report.failed
    assert failed.file == "run.zip/results/render_4.html"
    assert failed.where == "step block 2" and failed.line > 1
    assert "no parsed_action" in failed.reason
    assert set(_by_task(run)) == {"0", "3", "6"}


def test_a_trajectory_for_an_unknown_task_fails_with_the_remedy(run, samples):
    TaskFactory(task_id="0", number=0, intent="What is the top-1 best-selling product in 2022")
    report = import_paths([samples / "gpt4turbo_render_0.html", samples / "llama3-8b_render_3.html"], run)
    assert report.counts()["imported"] == 1
    [failed] = report.failed
    assert failed.task_id == "3"
    assert failed.reason == "task webarena/3 is not imported (run manage.py import_tasks)"


def test_a_different_trajectory_for_a_task_is_refused_unless_replacing(webarena_tasks, run, tmp_path):
    first = tmp_path / "a" / "render_3.html"
    first.parent.mkdir()
    first.write_text(render_html(steps=[RenderStep(action="scroll [down]", screenshot=png((1, 1, 1)))]))
    import_paths([first], run)
    original = Trajectory.objects.get(run=run)
    TrajectoryScoreFactory(trajectory=original)

    second = tmp_path / "b" / "render_3.html"
    second.parent.mkdir()
    second.write_text(render_html(steps=[RenderStep(action="scroll [up]"), RenderStep(action="stop [done]")]))

    refused = import_paths([second], run)
    [entry] = refused.failed
    assert "already has a different trajectory for task webarena/3" in entry.reason and "--replace" in entry.reason
    assert Trajectory.objects.get(run=run).pk == original.pk

    replaced = import_paths([second], run, replace=True)
    assert replaced.counts()["replaced"] == 1
    current = Trajectory.objects.get(run=run)
    assert current.pk != original.pk and current.outcome_status == "answered"
    assert list(current.steps.values_list("action", flat=True)) == ["scroll [up]", "stop [done]"]
    assert not Step.objects.filter(trajectory_id=original.pk).exists()
    assert not current.scores.exists()  # scores of the replaced content go with it


def test_a_failed_store_leaves_neither_rows_nor_files(webarena_tasks, run, samples, monkeypatch):
    def fail(*args, **kwargs):
        raise IntegrityError("step rows refused")

    monkeypatch.setattr("trajectories.services.trajectory_rows.insert_steps", fail)
    report = import_paths([samples / "llama3-8b_render_3.html"], run)
    [entry] = report.failed
    assert entry.reason == "could not be stored: step rows refused"
    assert not Trajectory.objects.exists() and not Screenshot.objects.exists()
    assert _stored_files() == []


def test_result_logs_and_run_config_in_the_same_upload(webarena_tasks, run, samples, tmp_path):
    folder = tmp_path / "results"
    (folder / "log_files").mkdir(parents=True)
    for sample in samples.glob("llama3-8b_*.html"):
        (folder / sample.name).write_bytes(sample.read_bytes())
    (folder / "log_files" / "log_1.log").write_text(
        "[Config file]: config_files/3.json\n[Result] (FAIL) config_files/3.json\n"
        "[Result] (PASS) config_files/6.json\n[Result] (PASS) config_files/99.json\n"
    )
    (folder / "config.json").write_text(json.dumps({"model": "meta-llama/Meta-Llama-3-8B-Instruct",
                                                    "instruction_path": "p_cot_id_actree_2s.json",
                                                    "api_key": "secret"}))

    report = import_paths([folder], run)

    assert [entry.kind for entry in report.files] == ["harness_config", "trajectory", "trajectory", "results"]
    results = report.files[-1]
    assert results.status == "imported"
    assert results.notes == ["3 results (2 PASS, 1 FAIL); 2 trajectories updated",
                             "1 verdicts without trajectory in this run, kept for the run page: 99"]
    assert {task: t.success for task, t in _by_task(run).items()} == {"3": False, "6": True}
    run.refresh_from_db()
    assert run.model == "meta-llama/Meta-Llama-3-8B-Instruct"
    assert run.metadata["harness_config"] == {"model": "meta-llama/Meta-Llama-3-8B-Instruct",
                                              "instruction_path": "p_cot_id_actree_2s.json"}
    again = import_paths([folder], run)
    assert [entry.status for entry in again.files] == ["unchanged"] * 4


def test_jsonl_in_a_zip_with_screenshots_beside_it(webarena_tasks, run, tmp_path):
    def document(task_id, shot):
        return {"schema": "trajectory/v1", "run": {"agent": "my-agent", "paradigm": "full_plan"},
                "task": {"task_id": task_id}, "plan": ["open reports", "read the table"],
                "steps": [{"index": 1, "action": "click [12]", "screenshot": shot,
                           "observation": "[12] link 'Reports\x00'"}],
                "outcome": {"status": "no_stop", "success": False}}

    def archive(second_shot):
        path = tmp_path / "mine.zip"
        with zipfile.ZipFile(path, "w") as zipped:
            zipped.writestr("out/shots/a.png", png((9, 9, 9)))
            zipped.writestr("out/run.jsonl", "\n".join([
                json.dumps(document("3", "shots/a.png")),
                json.dumps(document("4", second_shot)),
                json.dumps(document("5", "data:image/png;base64," + base64.b64encode(png((9, 9, 9))).decode())),
            ]))
        return path

    report = import_paths([archive("shots/missing.png")], run)

    # One bad line fails alone, named; the other lines are stored.
    assert [(entry.line, entry.status) for entry in report.files] == [(1, "imported"), (2, "failed"), (3, "imported")]
    assert report.files[1].where == "steps[0].screenshot"
    assert "not found beside the trajectory" in report.files[1].reason
    assert sorted(_by_task(run)) == ["3", "5"] and Screenshot.objects.count() == 1
    run.refresh_from_db()
    assert (run.agent, run.paradigm) == ("my-agent", "full_plan")

    report = import_paths([archive("shots/a.png")], run)
    assert [(entry.line, entry.status) for entry in report.files] == [(1, "unchanged"), (2, "imported"),
                                                                      (3, "unchanged")]
    assert Screenshot.objects.count() == 1  # the same image, once as a file and once inline
    three = _by_task(run)["3"]
    assert three.plan == ["open reports", "read the table"] and three.success is False
    assert three.steps.get().element_label == "link 'Reports\ufffd'"
    run.refresh_from_db()
    assert (run.agent, run.paradigm) == ("my-agent", "full_plan")


def test_the_same_trajectory_encoded_differently_is_unchanged(webarena_tasks, run, tmp_path):
    shot = png((5, 6, 7))
    step = {"index": 1, "action": "stop [x]"}
    inline = {"schema": "trajectory/v1", "task": {"task_id": "3"}, "outcome": {"status": "answered"},
              "final_answer": "x",
              "steps": [{**step, "screenshot": "data:image/png;base64," + base64.b64encode(shot).decode()}]}
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "t.json").write_text(json.dumps(inline))
    (tmp_path / "two").mkdir()
    (tmp_path / "two" / "s.png").write_bytes(shot)
    (tmp_path / "two" / "t.json").write_text(json.dumps({**inline, "steps": [{**step, "screenshot": "s.png"}]}))
    assert import_paths([tmp_path / "one"], run).counts()["imported"] == 1
    assert import_paths([tmp_path / "two"], run).counts()["unchanged"] == 1


def test_html2json_output_imports_with_a_note(webarena_tasks, run, tmp_path):
    dump = tmp_path / "json_dump.json"
    dump.write_text(json.dumps({"example_6": {
        "task_id": 6, "intent": "What are the top-5 best-selling product in 2023", "success": False,
        "messages": [{"user": "URL: http://x/admin\n\nobservation:\n[20] SELECT 'Today'", "image": "i.png"},
                     {"assistant": "In summary, the next action I will perform is ```stop [N/A]```"}]}}))
    [entry] = import_paths([dump], run).files
    assert (entry.status, entry.where, entry.format) == ("imported", "example_6", "webarena_html2json")
    assert "html2json keeps no executed actions" in entry.notes[0]
    assert Trajectory.objects.get().outcome_status == "na"


def test_a_different_intent_is_noted(webarena_tasks, run, tmp_path):
    path = tmp_path / "render_3.html"
    path.write_text(render_html(steps=[], intent="Something else entirely"))
    [entry] = import_paths([path], run).files
    assert entry.status == "imported"
    assert entry.notes == ["the file's intent differs from task webarena/3's: 'Something else entirely'"]


def test_progress_and_the_whole_import_refused_over_the_limits(webarena_tasks, run, samples, settings, monkeypatch):
    calls = []
    import_paths([samples], run, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(0, 4), (4, 4)]  # the three render files are committed in one batch, before SOURCES.md

    monkeypatch.setattr(import_batch, "BATCH_FILES", 1)
    calls.clear()
    import_paths([samples], AgentRunFactory(), progress=lambda done, total: calls.append((done, total)))
    assert calls == [(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]

    settings.INGEST_MAX_FILES = 2
    other = AgentRunFactory()
    report = import_paths([samples], other)
    assert report.refused == "import refused, nothing was read: more than 2 files (counting the files inside archives)"
    assert not report.ok and report.files == []
    assert not Trajectory.objects.filter(run=other).exists()


def test_report_as_a_dict(webarena_tasks, run, samples):
    report = import_paths([samples / "gpt4turbo_render_0.html", samples / "SOURCES.md"], run).to_dict()
    assert report["run"] == "llama-run" and report["ok"] is True
    assert report["counts"] == {"imported": 1, "unchanged": 0, "replaced": 0, "failed": 0, "skipped": 1}
    assert report["files"][0] == {
        "file": "gpt4turbo_render_0.html", "status": "imported", "kind": "trajectory", "format": "webarena_render",
        "task_id": "0", "line": None, "where": "", "reason": "", "notes": [],
        "trajectory_id": Trajectory.objects.get().pk,
    }
    assert report["files"][1]["reason"] == "not a trajectory, result log or run description file"


def test_two_files_for_one_task_in_the_same_upload(webarena_tasks, run, tmp_path):
    same = render_html(steps=[RenderStep(action="scroll [down]", screenshot=png((3, 3, 3)))])
    for folder, text in (("a", same), ("b", same), ("c", render_html(steps=[RenderStep(action="go_back")]))):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "render_3.html").write_text(text)

    report = import_paths([tmp_path / "a", tmp_path / "b", tmp_path / "c"], run)

    assert [entry.status for entry in report.files] == ["imported", "unchanged", "failed"]
    assert "already has a different trajectory" in report.files[2].reason
    assert Trajectory.objects.get().steps.get().action == "scroll [down]"
    assert len(_stored_files()) == Screenshot.objects.count() == 1


@pytest.mark.parametrize("workers", [1, 2])
def test_an_import_stopped_midway_leaves_files_only_for_what_it_stored(webarena_tasks, run, samples, settings,
                                                                       monkeypatch, workers):
    """Files read ahead of the one being stored had their screenshots written: they go too."""
    settings.INGEST_WORKERS = workers
    monkeypatch.setattr(import_batch, "BATCH_FILES", 1)

    def stop_after_the_first(done, total):
        if done == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        import_paths(sorted(samples.glob("*.html")), run, progress=stop_after_the_first)
    assert Trajectory.objects.count() == 1
    stored = sorted(path.relative_to(settings.MEDIA_ROOT).as_posix() for path in _stored_files())
    assert stored == sorted(Screenshot.objects.values_list("image", flat=True)) != []


def test_an_import_stopped_within_a_batch_keeps_nothing_of_the_batch(webarena_tasks, run, samples, monkeypatch):
    """Stopped once the batch's rows are written, before it commits: they are rolled back, and the
    screenshot files of its files removed."""
    monkeypatch.setattr(import_batch, "BATCH_SECONDS", 600)  # one batch, however slow the machine
    insert_steps, inserted = trajectory_rows.insert_steps, []

    def stop_once_written(rows):
        insert_steps(rows)
        inserted.append(rows)
        raise KeyboardInterrupt

    monkeypatch.setattr(trajectory_rows, "insert_steps", stop_once_written)
    with pytest.raises(KeyboardInterrupt):
        import_paths(sorted(samples.glob("*.html")), run)
    assert len({row[0] for row in inserted[0]}) == 3  # the steps of the batch's three files, in one statement
    assert not Trajectory.objects.exists() and not Screenshot.objects.exists()
    assert _stored_files() == []


def test_a_file_failing_in_a_batch_fails_alone(webarena_tasks, run, samples, tmp_path, monkeypatch):
    """The failing record's rows are rolled back to its savepoint; the file's other record, and the
    files before and after it in the batch, are kept."""
    monkeypatch.setattr(import_batch, "BATCH_SECONDS", 600)
    for name in ("gpt4turbo_render_0.html", "llama3-8b_render_6.html"):
        (tmp_path / name).write_bytes((samples / name).read_bytes())
    shot = "data:image/png;base64," + base64.b64encode(png((1, 2, 3))).decode()
    (tmp_path / "list.json").write_text(json.dumps([
        {"schema": "trajectory/v1", "task": {"task_id": task_id}, "outcome": {"status": "no_stop"},
         "steps": [{"index": 1, "action": "click [1]", "screenshot": screenshot}]}
        for task_id, screenshot in (("3", shot), ("4", "shots/missing.png"))]))

    report = import_paths([tmp_path], run)

    assert [(Path(entry.file).name, entry.status) for entry in report.files] == [
        ("gpt4turbo_render_0.html", "imported"), ("list.json", "imported"), ("list.json", "failed"),
        ("llama3-8b_render_6.html", "imported")]
    assert set(_by_task(run)) == {"0", "3", "6"}
    assert sorted(path.relative_to(settings.MEDIA_ROOT).as_posix() for path in _stored_files()) == sorted(
        Screenshot.objects.values_list("image", flat=True)) != []


def test_a_trajectory_refused_by_the_database_in_a_batch_fails_alone(webarena_tasks, run, samples, monkeypatch):
    """A concurrent import stores task 6 after this one checked it: the batch's rows meet the (run,
    task) constraint, and its trajectories are written again one by one, the one at fault failing alone."""
    monkeypatch.setattr(import_batch, "BATCH_SECONDS", 600)
    take_files = ingest.take_files

    def stored_concurrently(record):
        if record.trajectory.task.task_id == "6":
            TrajectoryFactory(run=run, task=Task.objects.get(benchmark="webarena", task_id="6"),
                              content_hash="from the other import")
        return take_files(record)

    monkeypatch.setattr(ingest, "take_files", stored_concurrently)
    report = import_paths(sorted(samples.glob("*.html")), run)

    assert [(entry.task_id, entry.status) for entry in report.files] == [
        ("0", "imported"), ("3", "imported"), ("6", "failed")]
    assert report.files[2].reason.startswith("could not be stored:") and report.files[2].trajectory_id is None
    assert _by_task(run)["6"].content_hash == "from the other import"
    assert {entry.trajectory_id for entry in report.files[:2]} == {_by_task(run)["0"].pk, _by_task(run)["3"].pk}
    assert sorted(path.relative_to(settings.MEDIA_ROOT).as_posix() for path in _stored_files()) == sorted(
        Screenshot.objects.values_list("image", flat=True)) != []


def test_one_parsing_process_reads_two_files_at_once(webarena_tasks, run, samples, settings, monkeypatch):
    """In process, two threads read: one's file writes and hashing overlap the other's parsing."""
    import threading

    from trajectories.services import reading

    settings.INGEST_WORKERS = 1
    both_reading, read_ahead = threading.Barrier(2, timeout=10), reading.read_ahead

    def read_together(source, max_bytes, keep):
        both_reading.wait()  # broken, and the file failed, unless another file is being read meanwhile
        return read_ahead(source, max_bytes, keep)

    monkeypatch.setattr(reading, "read_ahead", read_together)
    report = import_paths(sorted(samples.glob("*.html"))[:2], run)
    assert report.counts()["imported"] == 2, [entry.reason for entry in report.files]


def test_screenshots_are_written_ahead_only_for_trajectories_that_will_be_stored(webarena_tasks, run, samples,
                                                                                 settings, monkeypatch, tmp_path):
    from trajectories.services import reading

    settings.INGEST_WORKERS = 1  # read on a thread of this process, where the writing can be watched
    written, write_ahead = [], reading.write_ahead

    def watched(record):
        written.append(record.trajectory.task.task_id)
        write_ahead(record)

    monkeypatch.setattr(reading, "write_ahead", watched)
    import_paths(sorted(samples.glob("*.html")), run)
    assert sorted(written) == ["0", "3", "6"]

    written.clear()
    assert import_paths(sorted(samples.glob("*.html")), run).counts()["unchanged"] == 3
    assert written == []  # what the run holds is not written again

    (tmp_path / "render_3.html").write_text(
        render_html(steps=[RenderStep(action="scroll [down]", screenshot=png((5, 5, 5)))]))
    assert import_paths([tmp_path], run).failed  # a different trajectory, refused without replace
    assert written == []
    assert import_paths([tmp_path], run, replace=True).counts()["replaced"] == 1
    assert written == ["3"]
    assert len(_stored_files()) == Screenshot.objects.count()


def test_a_trajectory_stored_after_all_has_the_screenshots_its_worker_left_behind(webarena_tasks, run, samples,
                                                                                   settings, monkeypatch):
    """A parsing worker sends back no screenshot bytes of a trajectory it saw would not be stored; if
    it is stored after all, its file is read again for them."""
    from trajectories.services import reading

    settings.INGEST_WORKERS = 2
    monkeypatch.setattr(ingest._RunImport, "will_store", lambda self, record: False)  # forked with the workers
    left_behind, read_again = [], reading.read_images_again

    def watched(source, record, max_bytes):
        left_behind.append((record.images_left_behind, all(not image.data for image in record.images.values())))
        read_again(source, record, max_bytes)

    monkeypatch.setattr(ingest, "read_images_again", watched)
    report = import_paths(sorted(samples.glob("*.html")), run)

    assert report.counts()["imported"] == 3, [entry.reason for entry in report.files]
    assert left_behind == [(True, True)] * 3
    assert_samples_imported(run)
    assert len(_stored_files()) == Screenshot.objects.count()
    for shot in Screenshot.objects.all():
        with shot.image.open("rb") as image:
            assert hashlib.sha256(image.read()).hexdigest() == shot.sha256


def test_screenshots_left_behind_are_not_taken_from_a_file_changed_since(samples, tmp_path):
    from trajectories.formats.readers import read_file
    from trajectories.formats.sources import Catalogue
    from trajectories.services.ingest import ingest_limits
    from trajectories.services.reading import read_images_again
    from trajectories.services.screenshots import leave_behind

    path = tmp_path / "render_3.html"
    path.write_bytes((samples / "llama3-8b_render_3.html").read_bytes())
    [source] = Catalogue([path], ingest_limits()).sources
    [record] = read_file(source, 1 << 30)
    images = {sha: image.data for sha, image in record.images.items()}
    leave_behind(record)
    read_images_again(source, record, 1 << 30)
    assert not record.images_left_behind and {sha: image.data for sha, image in record.images.items()} == images

    leave_behind(record)
    path.write_text(render_html(steps=[RenderStep(action="scroll [down]", screenshot=png((5, 5, 5)))]))
    with pytest.raises(OSError, match="the file changed while it was being imported"):
        read_images_again(source, record, 1 << 30)


def test_agent_step_rows_are_written_with_every_column():
    from trajectories.services.trajectory_rows import STEP_FIELDS

    assert sorted(STEP_FIELDS) == sorted(field.name for field in Step._meta.concrete_fields if not field.primary_key)


def test_screenshots_already_stored_by_another_run_are_shared_not_copied(webarena_tasks, run, samples,
                                                                          django_capture_on_commit_callbacks):
    import_paths([samples], run)
    rows = dict(Screenshot.objects.values_list("sha256", "id"))
    with django_capture_on_commit_callbacks(execute=True):
        report = import_paths([samples], AgentRunFactory(name="second-run"))
    assert report.counts()["imported"] == 3
    assert dict(Screenshot.objects.values_list("sha256", "id")) == rows
    assert set(Step.objects.filter(trajectory__run__name="second-run").values_list("screenshot_id", flat=True)) \
        == set(rows.values())
    assert len(_stored_files()) == len(rows)
