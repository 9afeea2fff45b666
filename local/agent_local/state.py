"""The local DynamoDB snapshot under $AGENT_HOME: read strictly, written atomically, never shrunk by accident.

The snapshot is `{"<logical table id>": [<item in DynamoDB JSON>, ...], ...}`. A file that cannot be
read as such stops the stack with `StateFileError` (a message naming the file and what to do) before
anything could be written over it; the state as it was when a process started is kept beside it as
`dynamodb.json.bak`.
"""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

from boto3.dynamodb.types import TypeDeserializer

SNAPSHOT_NAME = "dynamodb.json"
_deserializer = TypeDeserializer()


class StateFileError(RuntimeError):
    """The local state file cannot be used as it is; the message says which file and what to do."""


def _advice(path: Path) -> str:
    backup = path.with_name(path.name + ".bak")
    restore = f" or restore the last good copy (`cp {backup} {path}`)" if backup.exists() else ""
    return (f"nothing was changed. Move the file away to start with empty tables (`mv {path} {path}.broken`)"
            f"{restore}, or point AGENT_HOME (--home) at another folder.")


def read_snapshot(path: Path, key_schemas: dict[str, list[str]]) -> dict[str, list[dict[str, Any]]]:
    """Items per logical table, validated against the tables' key attributes.

    `key_schemas` maps each known logical table id to its key attribute names.
    """
    if not path.exists():
        return {}

    def fail(what: str) -> StateFileError:
        return StateFileError(f"cannot read the local state {path}: {what}; {_advice(path)}")

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise fail("it is not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise fail(f"it is not valid JSON (line {error.lineno}, column {error.colno})") from None
    except OSError as error:
        raise fail(f"it cannot be opened ({error.strerror})") from None
    if not isinstance(data, dict):
        raise fail(f"expected a JSON object of table name -> items, found a JSON {type(data).__name__}")
    for table, items in data.items():
        if table not in key_schemas:
            raise fail(f"unknown table {table!r} (known: {', '.join(sorted(key_schemas))})")
        if not isinstance(items, list):
            raise fail(f"table {table!r} holds a {type(items).__name__}, expected a list of items")
        for index, item in enumerate(items):
            where = f"item {index} of table {table!r}"
            if not isinstance(item, dict):
                raise fail(f"{where} is a {type(item).__name__}, expected an object")
            for name, value in item.items():
                try:
                    _check_numbers(_deserializer.deserialize(value))
                except (TypeError, ValueError, AttributeError, KeyError, ArithmeticError):
                    raise fail(f"attribute {name!r} of {where} is not a typed DynamoDB value "
                               f"(expected e.g. {{\"S\": \"text\"}} or {{\"N\": \"1\"}})") from None
            missing = [key for key in key_schemas[table] if key not in item]
            if missing:
                raise fail(f"{where} lacks its key attribute(s) {', '.join(missing)}")
    return data


def _check_numbers(value: Any) -> None:
    """boto3 reads a malformed number ({"N": "three"}) as NaN without complaint; DynamoDB would refuse it."""
    if isinstance(value, Decimal) and not value.is_finite():
        raise ValueError("not a number")
    if isinstance(value, dict):
        for inner in value.values():
            _check_numbers(inner)
    elif isinstance(value, (list, set)):
        for inner in value:
            _check_numbers(inner)


def write_snapshot(path: Path, dump: dict[str, list[dict[str, Any]]]) -> None:
    """Write atomically: a reader or a crash sees the old file or the new one, never half of one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        json.dump(dump, handle, ensure_ascii=False)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def keep_backup(path: Path) -> None:
    """Copy the state as found at start to `<name>.bak` (atomically), once it has been read successfully."""
    if not path.exists():
        return
    backup = path.with_name(path.name + ".bak")
    tmp = backup.with_name(f".{backup.name}.{os.getpid()}.tmp")
    tmp.write_bytes(path.read_bytes())
    os.replace(tmp, backup)
