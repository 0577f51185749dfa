from django.core.management.base import BaseCommand

from trajectories.services.media_check import clear_missing, missing_files


class Command(BaseCommand):
    help = ("List screenshot rows and kept uploads whose file is missing from the media store; "
            "--fix removes those screenshot rows (their steps then show none) and forgets those uploads.")

    def add_arguments(self, parser):
        parser.add_argument("--fix", action="store_true", help="Clear the rows listed.")

    def handle(self, *args, fix, **options):
        missing = missing_files()
        for item in missing:
            shown_on = f" (shown on {item.steps} step{'s' if item.steps != 1 else ''})" if item.kind == "screenshot" else ""
            self.stdout.write(f"{item.kind} #{item.pk}: {item.name} is missing{shown_on}")
        if not missing:
            self.stdout.write(self.style.SUCCESS("Every file named by a row is in the media store."))
            return
        if fix:
            clear_missing(missing)
            self.stdout.write(self.style.SUCCESS(f"Cleared {len(missing)} row{'s' if len(missing) != 1 else ''}."))
        else:
            self.stdout.write(f"{len(missing)} missing; run again with --fix to clear them.")
