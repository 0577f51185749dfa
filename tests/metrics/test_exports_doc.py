import io
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from metrics import exports
from metrics.exports_doc import with_column_tables

DOC = Path(settings.BASE_DIR) / "docs" / "exports.md"


def test_the_doc_lists_every_exported_column_as_declared():
    """Fails while docs/exports.md differs from the declared columns: `manage.py write_exports_doc` rewrites it."""
    text = DOC.read_text(encoding="utf-8")
    assert with_column_tables(text) == text


def test_a_declared_column_replaces_its_outdated_row_and_the_prose_stays():
    text = DOC.read_text(encoding="utf-8")
    outdated = text.replace("| `recovery` | number | Recovery Rate: recoveries / deviations (METRICS.md 2) |\n",
                            "| `recovery` | integer | Recoveries |\n| `dropped` | text | A column no export has |\n")
    assert outdated != text
    assert with_column_tables(outdated) == text


def test_each_table_holds_its_export_s_columns_in_order():
    text = DOC.read_text(encoding="utf-8")
    scores = text.split("(`scores`)", 1)[1].split("\n## ", 1)[0]
    names = [line.split("`")[1] for line in scores.splitlines() if line.startswith("| `")]
    assert names == [column.name for column in exports.SCORE_COLUMNS]
    assert "| `success` | true/false | Task success, the harness's verdict else the offline check's" in scores


def test_a_doc_without_an_export_s_section_is_refused():
    with pytest.raises(ValueError, match=r"no section headed '\.\.\. \(`judges`\)'"):
        with_column_tables(DOC.read_text(encoding="utf-8").replace("(`judges`)", "(judges)"))


def test_the_command_leaves_an_up_to_date_doc_as_it_is():
    before = DOC.read_bytes()
    out = io.StringIO()
    call_command("write_exports_doc", stdout=out)
    assert "already lists every export's columns" in out.getvalue()
    assert DOC.read_bytes() == before
