"""The static import closure of a function as it is packaged: what its handler can import, lazily or not.

A function ships its own folder (CodeUri), its layers (the project packages each layer's Makefile
copies, the distributions pinned by its requirements.lock) and the Lambda runtime (the standard
library, boto3 and its dependencies). An image function ships what containers/stage.sh copies and
its image's requirements.lock. Every `import` in every module reached from the handler counts:
module level, inside functions, and the configured provider's plug-in (roles/base.PROVIDERS) once
the provider interface is reached. Only an import guarded by `except ImportError` is optional.
"""

from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

from agent_local.template import REPO_ROOT, function_folder, layers_of

#: What Lambda's python3.12 runtime carries besides the standard library.
RUNTIME = frozenset({"boto3", "botocore", "s3transfer", "jmespath", "dateutil", "urllib3", "six", "awslambdaric"})
#: The project's own top-level packages, by the folder each lives in.
PACKAGE_ROOTS = ("layers/core", "layers/llm", "layers/offline", "retrieval", "ingest", "local", "tools")


def canonicalize_name(name: str) -> str:
    """A distribution name as the package index compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class Package:
    """What one deployment unit ships: project packages (name -> source folder) and import names."""

    packages: dict[str, Path] = field(default_factory=dict)
    imports: frozenset[str] = frozenset()
    #: dotted subpackages the build removes from what it copies (a layer's other provider)
    removed: frozenset[str] = frozenset()


@cache
def _import_names() -> dict[str, frozenset[str]]:
    """distribution (canonical) -> its top-level import names, from what this environment has installed."""
    names: dict[str, set[str]] = {}
    for top, dists in packages_distributions().items():
        for dist in dists:
            names.setdefault(canonicalize_name(dist), set()).add(top)
    return {dist: frozenset(tops) for dist, tops in names.items()}


def locked_imports(lock: Path) -> frozenset[str]:
    """The import names of the distributions a lock file pins."""
    found: set[str] = set()
    for line in lock.read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==", line.strip())
        if match:
            found |= _import_names().get(canonicalize_name(match.group(1)), frozenset())
    return frozenset(found)


def _own_package(name: str) -> Path | None:
    for root in PACKAGE_ROOTS:
        if (REPO_ROOT / root / name / "__init__.py").is_file():
            return REPO_ROOT / root / name
    return None


def layer_package(folder: Path, logical: str) -> Package:
    """A layer as its folder's Makefile target `build-<logical>` builds it: the project packages it
    copies (less the subpackages it removes) and the distributions its lock pins."""
    makefile = (folder / "Makefile").read_text()
    recipe = re.search(rf"^build-{logical}:\n((?:\t.*\n?|[^\S\n]*\\?\n)*)", makefile, re.MULTILINE)
    if recipe is None:
        raise ValueError(f"{folder}/Makefile has no target build-{logical}")
    body = recipe.group(1)
    copied = {word for line in body.splitlines() if line.strip().startswith("cp -r") for word in line.split()}
    removed = {f"{top}.{sub.replace('/', '.')}" for top, sub in re.findall(r"python/(insurance_\w+)/([\w/]+?)(?:\.py)?\"", body)
               if any(line.strip().startswith("rm -") and f"{top}/{sub}" in line for line in body.splitlines())}
    lock = re.search(r"-c (\S*requirements\.lock)", body) or re.search(r"-c (\S*requirements\.lock)", makefile)
    # A layer may copy a package from outside its folder (the offline layer: retrieval/insurance_text).
    sources = [(folder / word).resolve() for word in copied]
    packages = {p.name: p for p in sources if (p / "__init__.py").is_file()}
    return Package(packages, locked_imports(folder / lock.group(1)), frozenset(removed))


def image_package(node: str) -> Package:
    """An image as containers/stage.sh stages it: the project packages it copies and its lock's distributions."""
    stage = (REPO_ROOT / "containers" / "stage.sh").read_text()
    names = set(re.findall(r"packages=\(([^)]*)\)", stage)[0].split())
    for staged_for, extra in re.findall(r'"\$node" = (\w+) \]; then packages\+=\(([^)]*)\)', stage):
        if staged_for == node:
            names |= set(extra.split())
    packages = {Path(n).name: REPO_ROOT / n for n in names}
    return Package(packages, locked_imports(REPO_ROOT / "containers" / node / "requirements.lock"))


def _guarded(tree: ast.AST) -> set[int]:
    """ids of import nodes that are optional (in a try whose handler catches ImportError) or for typing only."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        optional = isinstance(node, ast.Try) and any(
            handler.type is not None and any(
                isinstance(n, ast.Name) and n.id in {"ImportError", "ModuleNotFoundError"} for n in ast.walk(handler.type))
            for handler in node.handlers)
        typing_only = isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        if optional or typing_only:
            for child in node.body:
                skipped |= {id(n) for n in ast.walk(child) if isinstance(n, ast.Import | ast.ImportFrom)}
    return skipped


def _source(package: Package, module: str) -> Path | None:
    top, *rest = module.split(".")
    base = package.packages.get(top)
    if base is None or any(module == r or module.startswith(f"{r}.") for r in package.removed):
        return None
    path = base.joinpath(*rest)
    if (path / "__init__.py").is_file():
        return path / "__init__.py"
    return path.with_suffix(".py") if path.with_suffix(".py").is_file() else None


def _imported(node: ast.Import | ast.ImportFrom, package: str) -> tuple[str, set[str]]:
    """(the module a `from` import reads, or "") and the names it imports, absolute (`from a import b` as `a.b`)."""
    if isinstance(node, ast.Import):
        return "", {alias.name for alias in node.names}
    if node.level:
        parts = package.split(".")
        base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    return base, {f"{base}.{alias.name}" for alias in node.names}


def imports_of(path: Path, module: str) -> set[str]:
    """Every module name `path` imports (absolute; `from a import b` also as `a.b`), optional ones aside."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _guarded(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) not in skipped and isinstance(node, ast.Import | ast.ImportFrom):
            base, names = _imported(node, package)
            found |= names | {base}
    return {name for name in found if name and name != "__future__"}


def _load_time_imports(nodes: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """The import statements that run when a module loads: not those inside a function's body."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for block in ("body", "orelse", "finalbody", "handlers"):
                children = getattr(node, block, None)
                if isinstance(children, list):
                    found += _load_time_imports(children)
    return found


def import_cycle(folders: list[Path]) -> list[str]:
    """One cycle of module-level imports among the modules under `folders` (package roots), or [].

    Only imports that run when a module loads count (not those inside functions, optional or for
    typing): those make the import order matter. `from pkg import submodule` is an edge to the
    submodule, not to `pkg`, so a package that re-exports its submodules is no cycle.
    """
    from graphlib import CycleError, TopologicalSorter

    files = {}
    for folder in folders:
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            files[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skipped = _guarded(tree)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        edges: set[str] = set()
        for node in _load_time_imports(tree.body):
            if id(node) in skipped:
                continue
            base, names = _imported(node, package)
            submodules = {name for name in names if name in files}
            edges |= submodules or ({base} if base else names)
        graph[module] = {name for name in edges if name in files and name != module}
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as error:
        return list(error.args[1])
    return []


def unshipped(roots: dict[str, Path], package: Package, provider: str | None) -> list[str]:
    """'module imports name' for each import reachable from `roots` (module -> file) that `package` lacks;
    with a `provider`, the provider interface also reaches that provider's plug-in."""
    from insurance_agent.roles.base import PROVIDERS

    missing: list[str] = []
    seen: set[str] = set()
    todo = list(roots.items())
    while todo:
        module, path = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        names = imports_of(path, module)
        if provider and module == "insurance_agent.roles.base":  # the configured plug-in, imported by name
            names.add(PROVIDERS[provider].partition(":")[0])
        for name in sorted(names):
            top = name.split(".")[0]
            if top in package.packages:
                source = _source(package, name)
                if source is not None:
                    todo.append((name, source))
                elif _source(package, name.rpartition(".")[0]) is None:
                    missing.append(f"{module} imports {name}, which is not in the package")
            elif _own_package(top) is not None:
                missing.append(f"{module} imports {name}: {top} is not shipped")
            elif top not in sys.stdlib_module_names and top not in RUNTIME and top not in package.imports \
                    and top not in roots:
                missing.append(f"{module} imports {name}: no shipped distribution provides {top}")
    return sorted(set(missing))


def function_package(template: dict, logical: str, resource: dict, provider: str) -> Package:
    """What `logical` ships with ModelProvider=`provider`."""
    if resource["Properties"].get("PackageType") == "Image":
        return image_package(function_folder(logical, resource).name)
    resources = template["Resources"]
    packages: dict[str, Path] = {}
    imports: set[str] = set()
    removed: set[str] = set()
    for layer in layers_of(template, resource, provider):
        built = layer_package(REPO_ROOT / resources[layer]["Properties"]["ContentUri"], layer)
        packages |= built.packages
        imports |= built.imports
        removed |= built.removed
    return Package(packages, frozenset(imports), frozenset(removed))


def function_closure(template: dict, logical: str, resource: dict, provider: str) -> list[str]:
    """The imports of `logical`'s handler (with ModelProvider=`provider`) that its package does not ship."""
    handler = function_folder(logical, resource) / "app.py"
    return unshipped({"app": handler}, function_package(template, logical, resource, provider), provider)


def shipped_modules(package: Package) -> dict[str, Path]:
    """Every module of the project packages that `package` ships (module -> file)."""
    modules: dict[str, Path] = {}
    for name, folder in package.packages.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            module = ".".join((name, *parts[:-1]) if parts[-1] == "__init__" else (name, *parts))
            if _source(package, module) is not None:
                modules[module] = path
    return modules


def unrunnable(template: dict, logical: str, resource: dict, provider: str) -> list[str]:
    """Imports of any module `logical` ships (not only those its handler reaches) that its package
    lacks. The plug-in a provider names is followed only from the handler (function_closure): a
    function without a model node's layers never creates a provider."""
    package = function_package(template, logical, resource, provider)
    return unshipped(shipped_modules(package), package, None)
