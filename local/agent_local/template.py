"""Read template.yaml (CloudFormation short-form tags included) so the local stack cannot drift from it."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
TEMPLATE_PATH = REPO_ROOT / "template.yaml"


class _CfnLoader(yaml.SafeLoader):
    """SafeLoader that turns `!Ref X` into {"Ref": "X"} and `!Sub s` into {"Fn::Sub": s}."""


def _tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> dict[str, Any]:
    if isinstance(node, yaml.ScalarNode):
        value: Any = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = loader.construct_sequence(node, deep=True)
    else:
        value = loader.construct_mapping(node, deep=True)
    if suffix == "Ref":
        return {"Ref": value}
    if suffix == "GetAtt" and isinstance(value, str):
        value = value.split(".", 1)
    return {f"Fn::{suffix}": value}


_CfnLoader.add_multi_constructor("!", _tag)


@lru_cache(maxsize=4)
def load_template(path: Path = TEMPLATE_PATH) -> dict[str, Any]:
    """The template as CloudFormation sees it after AWS::LanguageExtensions: its Fn::ForEach loops expanded."""
    template = yaml.load(path.read_text(encoding="utf-8"), Loader=_CfnLoader)  # noqa: S506 - SafeLoader subclass
    for section in ("Conditions", "Resources", "Outputs"):
        if section in template:
            template[section] = expand_for_each(template[section])
    return template


_FOR_EACH = "Fn::ForEach::"
_NOT_ALPHANUMERIC = re.compile(r"[^A-Za-z0-9]")


def expand_for_each(section: dict[str, Any]) -> dict[str, Any]:
    """A section with each `Fn::ForEach::Name: [Identifier, [values], {OutputKey: OutputValue}]` replaced,
    where it stands, by its fragment once a value: `${Identifier}`, `&{Identifier}` (the value's
    alphanumerics only) and `{"Ref": Identifier}` become the value, in keys and values alike. Only a
    literal collection: what the transform would resolve from a parameter is not read here."""
    out: dict[str, Any] = {}
    for key, value in section.items():
        if not key.startswith(_FOR_EACH):
            if key in out:
                raise ValueError(f"{key} is defined twice")
            out[key] = value
            continue
        identifier, collection, fragment = value
        if not isinstance(collection, list) or not all(isinstance(item, str) for item in collection):
            raise ValueError(f"{key}: only a literal list of strings is expanded here, not {collection!r}")
        for item in collection:
            expanded = expand_for_each(_substitute(fragment, identifier, item))
            if clash := set(out) & set(expanded):
                raise ValueError(f"{key} makes {', '.join(sorted(clash))} again")
            out |= expanded
    return out


def _substitute(node: Any, identifier: str, value: str) -> Any:
    if isinstance(node, str):
        return node.replace(f"${{{identifier}}}", value).replace(f"&{{{identifier}}}", _NOT_ALPHANUMERIC.sub("", value))
    if isinstance(node, list):
        return [_substitute(child, identifier, value) for child in node]
    if isinstance(node, dict):
        if node == {"Ref": identifier}:
            return value
        return {_substitute(key, identifier, value): _substitute(child, identifier, value) for key, child in node.items()}
    return node


def resources_of_type(template: dict[str, Any], kind: str) -> dict[str, dict[str, Any]]:
    return {name: res for name, res in template["Resources"].items() if res["Type"] == kind}


def parameter_defaults(template: dict[str, Any]) -> dict[str, str]:
    return {name: str(p["Default"]) for name, p in template.get("Parameters", {}).items() if "Default" in p}


def state_machine(template: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    (name, resource), = resources_of_type(template, "AWS::Serverless::StateMachine").items()
    return name, resource


def resolve(template: dict[str, Any], parameters: dict[str, str], value: Any) -> str | None:
    """A template value as CloudFormation would resolve it from `parameters`: Ref, Fn::Sub (of
    parameters), Fn::Join (of a list or an Fn::Split), Fn::If over the template's Conditions (Equals,
    Not, And, Or). None for AWS::NoValue and for anything else (resource attributes and other
    intrinsics stay unresolved)."""
    if not isinstance(value, dict):
        return str(value)
    if "Ref" in value:
        if value["Ref"] == "AWS::NoValue":
            return None
        return str(parameters.get(value["Ref"], value["Ref"]))
    if "Fn::Sub" in value and isinstance(value["Fn::Sub"], str):
        return re.sub(r"\$\{([\w:]+)\}", lambda m: str(parameters.get(m.group(1), m.group(0))), value["Fn::Sub"])
    if "Fn::If" in value:
        condition, if_true, if_false = value["Fn::If"]
        return resolve(template, parameters, if_true if _holds(template, parameters, condition) else if_false)
    if "Fn::Join" in value:
        delimiter, items = value["Fn::Join"]
        parts = _resolve_list(template, parameters, items)
        return None if parts is None or None in parts else delimiter.join(parts)
    return None


def _resolve_list(template: dict[str, Any], parameters: dict[str, str], value: Any) -> list[str | None] | None:
    """A list value: a literal list of values, or Fn::Split of a string (how a condition tests whether
    a comma list holds an item: template.yaml's RoleProviders). None when it does not resolve."""
    if isinstance(value, list):
        return [resolve(template, parameters, item) for item in value]
    if isinstance(value, dict) and "Fn::Split" in value:
        delimiter, text = value["Fn::Split"]
        resolved = resolve(template, parameters, text)
        return None if resolved is None else resolved.split(delimiter)
    return None


def referenced_parameters(template: dict[str, Any], value: Any) -> set[str]:
    """The parameters a template value depends on: its Refs, its Fn::Sub names and its conditions' Refs."""
    found: set[str] = set()
    parameters = template.get("Parameters", {})

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "Ref" in node and node["Ref"] in parameters:
                found.add(node["Ref"])
            if isinstance(node.get("Fn::Sub"), str):
                found.update(name for name in re.findall(r"\$\{([\w:]+)\}", node["Fn::Sub"]) if name in parameters)
            if isinstance(node.get("Fn::If"), list) and isinstance(node["Fn::If"][0], str):
                walk(template["Conditions"][node["Fn::If"][0]])
            for key in ("Condition", "Fn::Condition"):
                if isinstance(node.get(key), str) and node[key] in template.get("Conditions", {}):
                    walk(template["Conditions"][node[key]])
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(value)
    return found


def holds(template: dict[str, Any], parameters: dict[str, str], condition: str) -> bool:
    """Whether the template's condition `condition` is true with `parameters`."""
    return _holds(template, parameters, condition)


def _holds(template: dict[str, Any], parameters: dict[str, str], condition: str | dict[str, Any]) -> bool:
    expression = template["Conditions"][condition] if isinstance(condition, str) else condition
    for key in ("Condition", "Fn::Condition"):  # how a condition names another (the loader's short form)
        if key in expression:
            return _holds(template, parameters, expression[key])
    if "Fn::Equals" in expression:
        left, right = (resolve(template, parameters, side) for side in expression["Fn::Equals"])
        return left == right
    if "Fn::Not" in expression:
        return not _holds(template, parameters, expression["Fn::Not"][0])
    if "Fn::And" in expression:
        return all(_holds(template, parameters, part) for part in expression["Fn::And"])
    if "Fn::Or" in expression:
        return any(_holds(template, parameters, part) for part in expression["Fn::Or"])
    raise ValueError(f"condition {condition!r} uses a function the local stack does not evaluate")


def function_alias(template: dict[str, Any]) -> str:
    """The alias every function publishes (Globals AutoPublishAlias), which the state machine calls."""
    return template["Globals"]["Function"]["AutoPublishAlias"]


def parse_overrides(items: list[str]) -> dict[str, str]:
    """SAM's `--parameter-overrides` forms: `Key=Value` or `ParameterKey=Key,ParameterValue=Value`."""
    out: dict[str, str] = {}
    for item in items:
        if item.startswith("ParameterKey="):
            key, sep, value = item.removeprefix("ParameterKey=").partition(",ParameterValue=")
        else:
            key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--parameter-overrides: {item!r} is not Key=Value")
        out[key] = value
    return out


def validate_overrides(template: dict[str, Any], overrides: dict[str, str]) -> dict[str, str]:
    """Check overrides against the template's Parameters (name, AllowedValues, AllowedPattern, Number, MinValue)."""
    import re

    parameters = template.get("Parameters", {})
    out = {}
    for key, raw in overrides.items():
        value = str(raw)
        spec = parameters.get(key)
        if spec is None:
            raise ValueError(f"--parameter-overrides: {key} is not a parameter of template.yaml "
                             f"(parameters: {', '.join(sorted(parameters))})")
        allowed = spec.get("AllowedValues")
        if allowed is not None and value not in [str(a) for a in allowed]:
            raise ValueError(f"--parameter-overrides: {key}={value!r} is not allowed "
                             f"(allowed: {', '.join(str(a) for a in allowed)})")
        pattern = spec.get("AllowedPattern")
        if pattern is not None and not re.fullmatch(pattern, value):
            raise ValueError(f"--parameter-overrides: {key}={value!r} does not match {pattern}")
        if spec.get("Type") == "Number":
            try:
                number = float(value)
            except ValueError:
                raise ValueError(f"--parameter-overrides: {key} must be a number, got {value!r}") from None
            if "MinValue" in spec and number < float(spec["MinValue"]):
                raise ValueError(f"--parameter-overrides: {key} must be at least {spec['MinValue']}, got {value}")
        out[key] = value
    return out


def layers_of(template: dict, resource: dict, provider: str, role_providers: str = "") -> list[str]:
    """Logical ids of a function's layers with ModelProvider=`provider` and RoleProviders=`role_providers`,
    its conditions resolved."""
    values = parameter_defaults(template) | {"ModelProvider": provider, "RoleProviders": role_providers}
    layers = [resolve(template, values, entry) for entry in resource["Properties"].get("Layers", [])]
    return [layer for layer in layers if layer]


def function_folder(logical: str, resource: dict[str, Any]) -> Path:
    """The folder of a function's handler: its CodeUri, or functions/<node> for an image function."""
    code_uri = resource["Properties"].get("CodeUri")
    if code_uri:
        return REPO_ROOT / code_uri
    node = re.sub(r"(?<!^)(?=[A-Z])", "_", logical.removesuffix("Function")).lower()
    return REPO_ROOT / "functions" / node
