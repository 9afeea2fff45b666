"""The locks: every build installs pinned versions, and the pins are those of the current requirements.

`make lock` (tools/lock.py) writes requirements-dev.lock and a requirements.lock beside each deployable's
requirement files; these checks read the files only (no package index), so a stale or incomplete lock
fails here before a build installs something that was never tested.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib import metadata

import pytest
from agent_local.template import REPO_ROOT
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
from script_loader import load_script




LOCK = load_script(REPO_ROOT / "tools" / "lock.py", "lock_tool")
DEPLOYABLES = [d.folder for d in LOCK.DEPLOYABLES]
PROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
SELF = canonicalize_name(PROJECT["name"])


def _requirements(text: str) -> list[Requirement]:
    return [Requirement(line) for line in LOCK.requirement_lines(text)]


def _pins(path) -> dict[str, list[Requirement]]:
    pins: dict[str, list[Requirement]] = {}
    for req in _requirements(path.read_text()):
        specs = list(req.specifier)
        assert len(specs) == 1 and specs[0].operator == "==", f"{path.name}: {req} is not an exact pin"
        pins.setdefault(canonicalize_name(req.name), []).append(req)
    return pins


def _assert_pinned(requirement: Requirement, pins: dict[str, list[Requirement]], where: str) -> None:
    locked = pins.get(canonicalize_name(requirement.name))
    assert locked, f"{where}: {requirement.name} is not pinned by the lock (run `make lock`)"
    for pin in locked:
        version = next(iter(pin.specifier)).version
        assert requirement.specifier.contains(version, prereleases=True), (
            f"{where}: the lock pins {pin} outside {requirement} (run `make lock`)")


def test_no_lock_is_stale_against_its_inputs():
    assert LOCK.stale() == [], "requirements changed since the locks were written: run `make lock`"


def test_the_inputs_hash_sees_a_changed_requirement(monkeypatch):
    deployable = LOCK.DEPLOYABLES[0]
    before = LOCK.digest(LOCK.deployable_inputs(deployable))
    real = LOCK.requirement_lines
    monkeypatch.setattr(LOCK, "requirement_lines", lambda text: real(text) + ["numpy"])
    assert LOCK.digest(LOCK.deployable_inputs(deployable)) != before
    # Comments and blank lines are not inputs: editing an explanation needs no new lock.
    monkeypatch.setattr(LOCK, "requirement_lines", lambda text: real(text + "\n# a note\n\n"))
    assert LOCK.digest(LOCK.deployable_inputs(deployable)) == before


@pytest.mark.parametrize("folder", DEPLOYABLES)
def test_every_requirement_of_a_deployable_is_pinned_by_its_lock(folder):
    pins = _pins(REPO_ROOT / folder / LOCK.LOCK_NAME)
    for name in ("requirements.txt", "pure-requirements.txt"):
        path = REPO_ROOT / folder / name
        if path.exists():
            for requirement in _requirements(path.read_text()):
                _assert_pinned(requirement, pins, f"{folder}/{name}")
    # Resolved for one target: one version per package, no environment markers left to evaluate.
    assert all(len(locked) == 1 and locked[0].marker is None for locked in pins.values()), folder


@pytest.mark.parametrize("folder", DEPLOYABLES)
def test_a_deployable_carries_the_versions_the_tests_ran_with(folder):
    dev = _pins(REPO_ROOT / LOCK.DEV_LOCK)
    environment = {"python_version": "3.12", "python_full_version": "3.12.0", "sys_platform": "linux",
                   "platform_system": "Linux", "platform_machine": "x86_64"}
    for name, [pin] in _pins(REPO_ROOT / folder / LOCK.LOCK_NAME).items():
        tested = [p for p in dev.get(name, []) if p.marker is None or p.marker.evaluate(environment)]
        if tested:
            assert [str(p.specifier) for p in tested] == [str(pin.specifier)], f"{folder}: {name}"


def test_the_development_lock_pins_every_dependency_and_extra():
    pins = _pins(REPO_ROOT / LOCK.DEV_LOCK)
    requirements = [Requirement(r) for r in PROJECT["dependencies"]]
    requirements += [Requirement(r) for extra in PROJECT["optional-dependencies"].values() for r in extra]
    for requirement in requirements:
        if canonicalize_name(requirement.name) != SELF:
            _assert_pinned(requirement, pins, "pyproject.toml")


def test_every_build_installs_with_its_lock():
    for layer in ("core", "offline"):
        makefile = (REPO_ROOT / "layers" / layer / "Makefile").read_text()
        assert re.search(r"^PIP := .*pip install .* -c requirements\.lock$", makefile, re.MULTILINE), layer
        installs = [line for line in makefile.splitlines() if "pip install" in line or "requirements.txt" in line]
        assert all(line.startswith("PIP :=") or "$(PIP)" in line for line in installs), layer
    # The two language-model layers build from one folder, each with its own requirements and lock.
    makefile = (REPO_ROOT / "layers" / "llm" / "Makefile").read_text()
    installs = [line for line in makefile.splitlines() if "requirements.txt" in line]
    assert sorted(installs) == sorted(f"\t$(PIP) $(PLATFORM) -c {p}/requirements.lock -r {p}/requirements.txt"
                                      for p in ("bedrock", "openai"))
    stage = (REPO_ROOT / "containers" / "stage.sh").read_text()
    installs = [line for line in stage.splitlines() if '"${PIP[@]}"' in line]
    assert len(installs) == 2 and all('-c "$spec/requirements.lock"' in line for line in installs)
    makefile = (REPO_ROOT / "Makefile").read_text()
    venv = [line for line in makefile.splitlines() if "pip install" in line and " -e " in line]
    assert venv and all(f"-c {LOCK.DEV_LOCK}" in line and "local" in line for line in venv)


def test_powertools_is_pinned_the_same_everywhere():
    files = ["layers/core/requirements.txt", "containers/retrieve/requirements.txt",
             "containers/triage/requirements.txt"]
    pins = {str(r.specifier) for r in map(Requirement, PROJECT["dependencies"]) if r.name == "aws-lambda-powertools"}
    for path in files:
        pins |= {str(r.specifier) for r in _requirements((REPO_ROOT / path).read_text())
                 if r.name == "aws-lambda-powertools"}
    assert len(pins) == 1 and next(iter(pins)).startswith("=="), pins


@pytest.mark.parametrize("package, first, older", [
    # models.RrfQuery (insurance_search/search.py: the RRF constant).
    ("qdrant-client", "1.16.0", "1.15.1"),
    # Bm25(stemmer=..., stopwords=...) (insurance_search/embeddings.py).
    ("fastembed", "0.9.0", "0.8.1"),
])
def test_the_floors_admit_no_release_without_what_the_code_uses(package, first, older):
    files = ["containers/retrieve/requirements.txt", "containers/triage/requirements.txt"]
    requirements = [r for r in map(Requirement, PROJECT["dependencies"]) if r.name == package]
    requirements += [r for path in files for r in _requirements((REPO_ROOT / path).read_text()) if r.name == package]
    assert requirements
    for requirement in requirements:
        assert requirement.specifier.contains(first) and not requirement.specifier.contains(older), requirement


def _closure(requirements: list[Requirement]) -> set[str]:
    """The distributions that installing these requirements brings, from the installed metadata."""
    extras = PROJECT["optional-dependencies"]
    seen: set[tuple[str, frozenset]] = set()
    todo = list(requirements)
    while todo:
        requirement = todo.pop()
        key = (canonicalize_name(requirement.name), frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        if key[0] == SELF:
            todo += [Requirement(r) for extra in requirement.extras for r in extras[extra]]
            continue
        try:
            requires = metadata.distribution(requirement.name).requires or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            dependency = Requirement(line)
            if dependency.marker is None or any(
                    dependency.marker.evaluate({"extra": extra}) for extra in requirement.extras or {""}):
                todo.append(dependency)
    return {name for name, _ in seen}


# Imported by the local stack but installed by a direct requirement that exists to bring it.
CARRIED_BY = {"botocore": "boto3", "werkzeug": "moto"}
#: The project's own top-level packages (pyproject's packages.find).
OWN_PACKAGES = {"agent_local", "agent_harness", "insurance_agent", "insurance_llm", "insurance_offline", "insurance_search", "insurance_text",
                "insurance_ingest"}


def test_the_agent_command_needs_only_the_dependencies_and_the_local_extra():
    # Every package its modules import is a direct requirement (a package that merely happens to come
    # along, as rich does through huggingface-hub today, can leave with that package's next release).
    # The harnesses (tools/agent_harness: fuzz.py needs hypothesis) feed the tests and benchmarks, never the command.
    direct = {canonicalize_name(Requirement(r).name): Requirement(r)
              for r in PROJECT["dependencies"] + PROJECT["optional-dependencies"]["local"]}
    providers = metadata.packages_distributions()
    test_only = {"agent_harness.fuzz"}
    for path in sorted((REPO_ROOT / "local" / "agent_local").rglob("*.py")):
        module = ".".join(path.relative_to(REPO_ROOT / "local").with_suffix("").parts)
        if module in test_only:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else [])
            for name in names:
                assert name not in test_only, f"{module} imports {name}"
                top = name.split(".")[0]
                if top in sys.stdlib_module_names or top in OWN_PACKAGES:
                    continue
                dists = {canonicalize_name(d) for d in providers.get(top, [])}
                assert dists, f"{module} imports {top}, which is not installed"
                declared = dists & set(direct)
                for dist in dists - declared:
                    carrier = CARRIED_BY.get(dist)
                    if carrier in direct and dist in _closure([direct[carrier]]):
                        declared.add(dist)
                assert declared, f"{module} imports {top}: not in pyproject's dependencies or `local` extra"


def test_the_lock_tool_is_pinned():
    assert Version(LOCK.uv_pin())
    assert any(line.startswith(f"uv=={LOCK.uv_pin()}") for line in LOCK.requirement_lines(
        (REPO_ROOT / LOCK.DEV_LOCK).read_text()))
