"""template.yaml's Fn::ForEach loops (AWS::LanguageExtensions): the local loader expands them as SAM CLI
does, and SAM CLI, run with this repository's samconfig.toml, reads the template at all."""

from __future__ import annotations

import copy
import tomllib

import pytest
from agent_local.template import REPO_ROOT, TEMPLATE_PATH, expand_for_each, load_template, resources_of_type
from samcli.lib.cfn_language_extensions import ProcessingPipeline, TemplateParsingProcessor, TemplateProcessingContext
from samcli.lib.cfn_language_extensions.processors import ForEachProcessor
from samcli.yamlhelper import yaml_parse


def test_the_local_loader_expands_the_loops_as_sam_cli_does():
    raw = yaml_parse(TEMPLATE_PATH.read_text(encoding="utf-8"))
    assert any(key.startswith("Fn::ForEach::") for key in raw["Resources"]), "the template has no loop to check"
    # Only SAM CLI's loop step: its later steps resolve parameters and Fn::Sub, which CloudFormation does
    # at deploy time and the local stack does itself.
    context = TemplateProcessingContext(fragment=copy.deepcopy(raw))
    sam = ProcessingPipeline([TemplateParsingProcessor(), ForEachProcessor()]).process_template(context)
    for section in ("Conditions", "Resources", "Outputs"):
        ours = expand_for_each(raw[section])
        assert ours == sam[section], section
        assert list(ours) == list(sam[section]), section


def test_sam_cli_reads_the_template_with_the_repository_config():
    from samcli.lib.providers.sam_function_provider import SamFunctionProvider
    from samcli.lib.providers.sam_stack_provider import SamLocalStackProvider

    # `sam build` and `sam local` expand the loops only when asked; samconfig.toml asks for every command.
    config = tomllib.loads((REPO_ROOT / "samconfig.toml").read_text(encoding="utf-8"))
    enabled = config["default"]["global"]["parameters"]["language_extensions"]
    stacks, _ = SamLocalStackProvider.get_stacks(str(TEMPLATE_PATH), parameter_overrides={"ModelProvider": "offline"},
                                                 language_extensions_enabled=enabled)
    functions = SamFunctionProvider(stacks, ignore_code_extraction_warnings=True).get_all()
    assert {f.name for f in functions} == set(resources_of_type(load_template(), "AWS::Serverless::Function"))


def test_a_loop_substitutes_its_identifier_in_keys_strings_and_refs_and_nests():
    section = {
        "Before": {"Type": "A"},
        "Fn::ForEach::Outer": ["Kind", ["Red", "Dark-Blue"], {
            "Fn::ForEach::Inner": ["Size", ["S", "L"], {
                "&{Kind}${Size}": {"Type": "B", "Properties": {"Name": {"Fn::Sub": "${${Kind}Thing}-${Size}"},
                                                                "Kind": {"Ref": "Kind"}, "Other": {"Ref": "Size2"}}},
            }],
        }],
        "After": {"Type": "C"},
    }
    out = expand_for_each(section)
    assert list(out) == ["Before", "RedS", "RedL", "DarkBlueS", "DarkBlueL", "After"]
    assert out["DarkBlueL"]["Properties"] == {"Name": {"Fn::Sub": "${Dark-BlueThing}-L"}, "Kind": "Dark-Blue",
                                              "Other": {"Ref": "Size2"}}


def test_a_loop_that_makes_a_name_twice_or_reads_a_parameter_is_refused():
    with pytest.raises(ValueError, match="makes Twice again"):
        expand_for_each({"Twice": {"Type": "A"}, "Fn::ForEach::L": ["X", ["Twice"], {"${X}": {"Type": "B"}}]})
    with pytest.raises(ValueError, match="literal list"):
        expand_for_each({"Fn::ForEach::L": ["X", {"Ref": "Names"}, {"${X}": {"Type": "B"}}]})
