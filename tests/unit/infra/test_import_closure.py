"""Every function imports only what its package ships, for every provider: a static closure over
each handler's imports (module level and lazy), the template's layers and the images' staging."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_harness.closure import Package, function_closure, import_cycle, imports_of, unrunnable, unshipped
from agent_local.template import REPO_ROOT, load_template, resources_of_type

TEMPLATE = load_template()
FUNCTIONS = resources_of_type(TEMPLATE, "AWS::Serverless::Function")
PROVIDERS = ["offline", "bedrock", "openai"]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("logical", sorted(FUNCTIONS))
def test_a_function_imports_only_what_it_ships(logical, provider):
    assert function_closure(TEMPLATE, logical, FUNCTIONS[logical], provider) == []


def test_the_closure_sees_lazy_imports_and_skips_optional_ones(tmp_path: Path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "lazy.py").write_text("def f():\n    import numpy\n")
    (package / "optional.py").write_text("try:\n    import numpy\nexcept ImportError:\n    numpy = None\n")
    (tmp_path / "app.py").write_text("from pkg import lazy, optional\n")
    shipped = Package({"pkg": package}, frozenset())
    assert unshipped({"app": tmp_path / "app.py"}, shipped, "offline") == [
        "pkg.lazy imports numpy: no shipped distribution provides numpy"]
    assert imports_of(package / "optional.py", "pkg.optional") == set()


def test_the_core_layer_alone_lacks_the_offline_provider():
    """The check can fail: a thin node given the offline provider's plug-in without its layer."""
    logical = next(name for name, res in FUNCTIONS.items() if "ContextualizeFunction" == name)
    resource = {**FUNCTIONS[logical], "Properties": {**FUNCTIONS[logical]["Properties"],
                                                   "Layers": [{"Ref": "CoreLayer"}]}}
    missing = function_closure(TEMPLATE, logical, resource, "offline")
    assert any("insurance_offline is not shipped" in line for line in missing)



@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("logical", sorted(name for name, res in FUNCTIONS.items()
                                           if res["Properties"].get("PackageType") != "Image"))
def test_every_module_a_zip_function_ships_can_run_in_its_package(logical, provider):
    """Images hold whole packages for both providers; a zip function's every module must import there."""
    assert unrunnable(TEMPLATE, logical, FUNCTIONS[logical], provider) == []


def test_no_module_of_the_shipped_packages_imports_itself_back_at_load_time():
    roots = [REPO_ROOT / folder for folder in ("layers/core", "layers/llm", "layers/offline", "retrieval", "ingest")]
    assert import_cycle(roots) == []


def test_the_cycle_check_finds_a_cycle_and_ignores_lazy_imports_and_re_exports(tmp_path: Path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from pkg.a import f\n")
    (package / "a.py").write_text("from pkg import b\n\ndef f():\n    return b\n")
    (package / "b.py").write_text("def g():\n    from pkg import a\n    return a\n")
    assert import_cycle([tmp_path]) == []  # b reaches a lazily; `from pkg import b` is an edge to b only
    (package / "b.py").write_text("import pkg.a\n")
    assert sorted(set(import_cycle([tmp_path]))) == ["pkg.a", "pkg.b"]
