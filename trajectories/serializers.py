"""JSON shapes of trajectory imports for the REST API."""

import json

from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.files.base import ContentFile
from rest_framework import serializers

from .formats.canonical import TrajectoryFormatError, check_depth
from .forms import check_upload_size
from .models import ImportJob, Paradigm

BODY_FILE_NAME = "request.jsonl"


class RunImportSerializer(serializers.Serializer):
    """Either multipart `files` (or `file`, the verdict import's name for them) or a JSON body whose
    `trajectories` are `trajectory/v1` objects."""

    run = serializers.CharField(max_length=200)
    agent = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
    model = serializers.CharField(max_length=200, required=False, default="", allow_blank=True)
    paradigm = serializers.ChoiceField(choices=Paradigm.choices, default=Paradigm.STEP_BY_STEP)
    replace = serializers.BooleanField(default=False)
    background = serializers.BooleanField(
        default=False, help_text="Answer at once with the import job instead of waiting for the report."
    )
    files = serializers.ListField(child=serializers.FileField(), required=False)
    file = serializers.ListField(child=serializers.FileField(), required=False,
                                 help_text="The same as `files`, as the verdict import names its field.")
    trajectories = serializers.ListField(child=serializers.JSONField(), required=False)

    def validate_trajectories(self, trajectories):
        """Each document within the nesting limit, so that writing it out as a JSONL line cannot
        exhaust the stack; the importer checks everything else, line by line."""
        errors = {}
        for position, document in enumerate(trajectories):
            try:
                check_depth(document)
            except TrajectoryFormatError as error:
                errors[position] = f"{error.where}: {error.message}"
        if errors:
            raise serializers.ValidationError(errors)
        return trajectories

    def validate(self, data):
        data["files"] = [*data.get("files", []), *data.pop("file", [])]
        if data["files"] and data.get("trajectories"):
            raise serializers.ValidationError("Send either files (multipart) or trajectories (JSON), not both.")
        if not data["files"] and not data.get("trajectories"):
            raise serializers.ValidationError(
                "Send the run's files as multipart fields `files` (or `file`), one per file, or its trajectories "
                "as a JSON body with `trajectories`, a list of trajectory/v1 objects.")
        if data.get("files"):
            try:
                check_upload_size(data["files"])
            except DjangoValidationError as error:
                raise serializers.ValidationError({"files": error.messages}) from None
        return data

    def upload_files(self) -> list[tuple[str, object]]:
        """The upload as (file name, content) pairs; a JSON body becomes one JSONL file, line N
        holding `trajectories[N-1]`."""
        if self.validated_data.get("files"):
            return [(item.name, item) for item in self.validated_data["files"]]
        lines = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in self.validated_data["trajectories"])
        return [(BODY_FILE_NAME, ContentFile(lines.encode("utf-8")))]


class ImportJobSerializer(serializers.ModelSerializer):
    run = serializers.CharField(source="run_name", read_only=True,
                                help_text="The run's name, kept when an upload that imported nothing had its empty run removed.")

    class Meta:
        model = ImportJob
        fields = ("id", "run", "status", "replace", "total", "processed", "report", "error", "created_at",
                  "finished_at")
        read_only_fields = fields
