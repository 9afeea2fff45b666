"""`<file name>.metadata.json`: metadata for files that cannot carry front matter.

The convention of Amazon Bedrock Knowledge Bases: `{"metadataAttributes": {"title": ...,
"file_id": ..., "domain": ..., "product": ..., "audience": [...], "language": ...}}`. A value may
also be given in Bedrock's typed form (`{"value": {"type": "STRING", "stringValue": ...},
"includeForEmbedding": true}`). A key this service does not use is ignored with a warning; a key
that looks like a misspelt `audience` refuses the document, because ignoring it would publish an
officer-only document to every user.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from insurance_search.documents import FRONT_MATTER_KEYS, looks_like_audience

from insurance_ingest.errors import LoadError

SUFFIX = ".metadata.json"
MAX_BYTES = 64 * 1024
_TYPED = ("stringValue", "numberValue", "booleanValue", "stringListValue")


def sidecar_path(path: Path) -> Path:
    return path.with_name(path.name + SUFFIX)


def read_sidecar(path: Path) -> tuple[dict[str, Any], list[str], bytes]:
    """(known keys, ignored keys, raw bytes) of the document's sidecar; empty when there is none."""
    side = sidecar_path(path)
    if not side.is_file() or side.is_symlink():
        return {}, [], b""
    if side.stat().st_size > MAX_BYTES:
        raise LoadError(LoadError.METADATA, f"{side.name} is larger than {MAX_BYTES // 1024} KB")
    raw = side.read_bytes()
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LoadError(LoadError.METADATA, f"{side.name} is not valid JSON ({type(exc).__name__})") from None
    if not isinstance(data, dict) or not isinstance(data.get("metadataAttributes"), dict):
        raise LoadError(LoadError.METADATA, f'{side.name} needs an object {{"metadataAttributes": {{...}}}}')
    extra = sorted(key for key in data if key != "metadataAttributes")
    known: dict[str, Any] = {}
    ignored: list[str] = [f"{key} (top level)" for key in extra]
    for key, value in data["metadataAttributes"].items():
        if key not in FRONT_MATTER_KEYS:
            if looks_like_audience(key):
                raise LoadError(LoadError.INVALID_FIELD, f"{side.name}: unknown key {key!r}; did you mean 'audience'?")
            ignored.append(key)
            continue
        known[key] = _plain(value)
    return known, ignored, raw


def _plain(value: Any) -> Any:
    """Bedrock's typed value form -> the plain value."""
    if isinstance(value, dict) and isinstance(value.get("value"), dict):
        typed = value["value"]
        for field in _TYPED:
            if field in typed:
                return typed[field]
    return value
