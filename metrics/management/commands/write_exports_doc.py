from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from metrics.exports_doc import with_column_tables


class Command(BaseCommand):
    help = "Rewrite the column tables of docs/exports.md from the columns each export declares."

    def handle(self, *args, **options):
        path = Path(settings.BASE_DIR) / "docs" / "exports.md"
        text = path.read_text(encoding="utf-8")
        written = with_column_tables(text)
        if written == text:
            self.stdout.write(f"{path} already lists every export's columns")
            return
        path.write_text(written, encoding="utf-8")
        self.stdout.write(f"{path}: column tables rewritten")
