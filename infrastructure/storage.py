"""Where uploaded files and screenshots live, from one URL (`MEDIA_STORAGE_URL`).

Web and worker processes on different machines must see the same files: a folder they all mount
(`file:///srv/trajscope/media`) or an S3-compatible bucket
(`s3://bucket/prefix?endpoint_url=http://minio:9000&region_name=us-east-1`; credentials from
`AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY`). Empty: the local folder `MEDIA_ROOT`.
"""

from urllib.parse import parse_qsl, unquote, urlsplit

S3_OPTIONS = {"endpoint_url", "region_name", "signature_version", "addressing_style", "custom_domain"}


class StorageURLError(ValueError):
    pass


def storage_from_url(url: str) -> dict:
    """The `STORAGES["default"]` entry for a media storage URL (empty: the folder MEDIA_ROOT)."""
    if not url:
        return {"BACKEND": "django.core.files.storage.FileSystemStorage"}
    parts = urlsplit(url)
    if parts.scheme == "file":
        if parts.netloc or not parts.path.startswith("/"):
            raise StorageURLError(f"MEDIA_STORAGE_URL {url!r}: a folder is file:///absolute/path")
        return {"BACKEND": "django.core.files.storage.FileSystemStorage",
                "OPTIONS": {"location": unquote(parts.path)}}
    if parts.scheme == "s3":
        if not parts.netloc:
            raise StorageURLError(f"MEDIA_STORAGE_URL {url!r}: name the bucket, s3://bucket/prefix")
        query = dict(parse_qsl(parts.query))
        unknown = sorted(set(query) - S3_OPTIONS)
        if unknown:
            raise StorageURLError(f"MEDIA_STORAGE_URL {url!r}: unknown option(s) {', '.join(unknown)}; "
                                  f"known: {', '.join(sorted(S3_OPTIONS))}")
        options = {"bucket_name": parts.netloc, "location": unquote(parts.path).strip("/"),
                   "default_acl": None, "querystring_auth": True, "file_overwrite": False}
        options.update(query)
        return {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": options}
    raise StorageURLError(f"MEDIA_STORAGE_URL {url!r}: expected file:///path or s3://bucket/prefix")


def describe_storage(storage) -> str:
    """Where a storage keeps its files, in words an operator can compare between hosts."""
    bucket = getattr(storage, "bucket_name", None)
    if bucket:
        prefix = getattr(storage, "location", "")
        endpoint = getattr(storage, "endpoint_url", None)
        where = f"s3://{bucket}/{prefix}".rstrip("/")
        return f"{where} at {endpoint}" if endpoint else where
    location = getattr(storage, "location", None)
    if location:
        return f"the folder {location}"
    return type(storage).__name__
