import zipfile

import pytest

from tests.trajectories.renders import png
from trajectories.formats.sources import (
    HARNESS_CONFIG,
    RESULTS,
    RUN_DESCRIPTION,
    SKIPPED,
    TRAJECTORIES,
    Catalogue,
    ImportRefused,
    Limits,
)

LIMITS = Limits(max_files=50, max_total_bytes=10 << 20, max_file_bytes=1 << 20, max_compression_ratio=100)


def _zip(path, entries: dict[str, bytes], compression=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def _listing(catalogue):
    return [(source.name, source.kind, source.problem) for source in catalogue]


def test_a_folder_in_processing_order_without_hidden_files_and_screenshots(tmp_path):
    folder = tmp_path / "results"
    (folder / "log_files").mkdir(parents=True)
    for name in ("render_10.html", "render_2.html", "config.json", "run.json", "README.md", ".DS_Store",
                 "shot.png", "log_files/log_1.log", "run.jsonl"):
        (folder / name).write_bytes(b"x")
    with Catalogue([folder], LIMITS) as catalogue:
        assert _listing(catalogue) == [
            ("results/run.json", RUN_DESCRIPTION, ""),
            ("results/config.json", HARNESS_CONFIG, ""),
            ("results/render_2.html", TRAJECTORIES, ""),
            ("results/render_10.html", TRAJECTORIES, ""),
            ("results/run.jsonl", TRAJECTORIES, ""),
            ("results/log_files/log_1.log", RESULTS, ""),
            ("results/README.md", SKIPPED, ""),
        ]


def test_zip_entries_are_read_in_place(tmp_path):
    archive = _zip(tmp_path / "run.zip", {"run/render_1.html": b"<pre>task_id: 1</pre>", "run/inner.zip": b"PK",
                                          "__MACOSX/run/._render_1.html": b"junk", "run/shots/1.png": png()})
    with Catalogue([archive], LIMITS) as catalogue:
        assert _listing(catalogue) == [("run.zip/run/render_1.html", TRAJECTORIES, ""),
                                       ("run.zip/run/inner.zip", SKIPPED, "")]
        render = catalogue.sources[0]
        assert render.read() == b"<pre>task_id: 1</pre>"
        assert render.read_sibling("shots/1.png") == png()
        assert render.read_sibling("../run/shots/1.png") == png()
        with pytest.raises(ValueError, match="outside the archive"):
            render.read_sibling("../../etc/passwd")
        with pytest.raises(FileNotFoundError):
            render.read_sibling("shots/2.png")


def test_unsafe_entry_names_are_refused(tmp_path):
    archive = _zip(tmp_path / "evil.zip", {"../escape.html": b"x", "/etc/cron.d/job.html": b"x",
                                           "ok/../../up.json": b"x", "fine.html": b"x", "..\\win.log": b"x"})
    with Catalogue([archive], LIMITS) as catalogue:
        problems = {source.name: source.problem for source in catalogue}
    assert problems["evil.zip/fine.html"] == ""
    for name in ("../escape.html", "/etc/cron.d/job.html", "ok/../../up.json", "..\\win.log"):
        assert problems[f"evil.zip/{name}"] == "refused: an archive entry with an absolute path or '..'"


def test_highly_compressed_entries_are_refused_unread(tmp_path):
    archive = _zip(tmp_path / "bomb.zip", {"bomb.html": b"\0" * (5 << 20), "small.json": b"{}"})
    limits = Limits(max_files=50, max_total_bytes=100 << 20, max_file_bytes=10 << 20, max_compression_ratio=100)
    with Catalogue([archive], limits) as catalogue:
        problems = {source.name: source.problem for source in catalogue}
    assert problems["bomb.zip/bomb.html"].startswith("refused: compression ratio")
    assert "over the limit of 100:1" in problems["bomb.zip/bomb.html"]
    assert problems["bomb.zip/small.json"] == ""


def test_encrypted_entries_are_refused(tmp_path):
    data = bytearray((_zip(tmp_path / "plain.zip", {"secret.html": b"x" * 100}, zipfile.ZIP_STORED)).read_bytes())
    central = data.index(b"PK\x01\x02")
    data[central + 8] |= 0x1  # the general purpose flag of the central directory entry
    (tmp_path / "locked.zip").write_bytes(bytes(data))
    with Catalogue([tmp_path / "locked.zip"], LIMITS) as catalogue:
        assert catalogue.sources[0].problem == "refused: encrypted archive entry"


def test_files_over_the_size_limit_fail_alone_except_jsonl(tmp_path):
    (tmp_path / "big.html").write_bytes(b"x" * 2000)
    (tmp_path / "big.jsonl").write_bytes(b"x" * 2000)
    (tmp_path / "small.html").write_bytes(b"x")
    limits = Limits(max_files=50, max_total_bytes=1 << 20, max_file_bytes=1000, max_compression_ratio=100)
    with Catalogue([tmp_path / "big.html", tmp_path / "big.jsonl", tmp_path / "small.html"], limits) as catalogue:
        problems = {source.name: source.problem for source in catalogue}
    assert problems == {"big.html": "2,000 bytes is over the limit of 1,000 bytes for one file",
                        "big.jsonl": "", "small.html": ""}


def test_too_many_files_or_bytes_refuse_the_whole_import(tmp_path):
    archive = _zip(tmp_path / "many.zip", {f"render_{n}.html": b"x" * 100 for n in range(6)})
    with pytest.raises(ImportRefused, match="more than 5 files"):
        Catalogue([archive], Limits(5, 1 << 20, 1 << 20, 100))
    with pytest.raises(ImportRefused, match="more than 500 bytes in total"):
        Catalogue([archive], Limits(50, 500, 1 << 20, 100))


def test_missing_paths_and_broken_archives_are_reported(tmp_path):
    (tmp_path / "broken.zip").write_bytes(b"PK\x03\x04 definitely not a zip")
    with Catalogue([tmp_path / "missing.html", tmp_path / "broken.zip"], LIMITS) as catalogue:
        problems = {source.name: source.problem for source in catalogue}
    assert problems[str(tmp_path / "missing.html")] == "no such file or folder"
    assert problems["broken.zip"].startswith("not a readable zip archive")


def test_folder_siblings_stay_inside_the_folder(tmp_path):
    folder = tmp_path / "upload"
    (folder / "shots").mkdir(parents=True)
    (folder / "t.json").write_text("{}")
    (folder / "shots" / "1.png").write_bytes(png())
    (tmp_path / "secret.png").write_bytes(png())
    with Catalogue([folder], LIMITS) as catalogue:
        [source] = catalogue.sources
        assert source.read_sibling("shots/1.png") == png()
        with pytest.raises(ValueError, match="outside the uploaded folder"):
            source.read_sibling("../secret.png")

