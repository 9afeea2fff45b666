"""The enums a JSON schema allows for its fields: what a model is told it may write there."""

from __future__ import annotations


def schema_enums(schema: dict, fields: tuple[str, ...]) -> dict[str, list[list]]:
    """{field: [enum, ...]}: every enum a field of one of `fields` takes anywhere in `schema`
    ($refs followed), in the order met."""
    defs = schema.get("$defs") or schema.get("definitions") or {}
    found: dict[str, list[list]] = {}

    def walk(node, name=None):
        if isinstance(node, dict):
            if "$ref" in node:
                walk(defs[node["$ref"].rsplit("/", 1)[-1]], name)
            if name in fields and "enum" in node:
                found.setdefault(name, []).append(node["enum"])
            for key, value in node.items():
                if key == "properties":
                    for field, sub in value.items():
                        walk(sub, field)
                elif key in ("items", "anyOf", "oneOf", "allOf"):
                    walk(value, name)
        elif isinstance(node, list):
            for item in node:
                walk(item, name)

    walk(schema)
    return found
