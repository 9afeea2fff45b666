"""`agent search` in-process: a tiny corpus ingested with `agent ingest` into a temporary --home.

The CLI prints one JSON line per query ({"query", "hits"} or {"query", "error"}), hits best first,
and exits non-zero when any query was invalid.
"""

from __future__ import annotations

import json

import pytest
from agent_local import cli
from insurance_search import index

TENANT = "acme"

DOCS = {
    "windscreen.md": """---
file_id: windscreen
title: Windscreen cover
domain: auto
audience: [user, officer, admin]
---
# Windscreen cover

A cracked windscreen is repaired free of charge at any partner garage, without a deductible.
""",
    "fraud.md": """---
file_id: fraud-desk
title: Fraud desk routing
domain: auto
audience: officer
---
# Fraud desk routing

Claims above 90 million rials are sent to the fraud desk before any payment is approved.
""",
    "dental.md": """---
file_id: dental
title: Dental cover
domain: health
audience: both
---
# Dental cover

Dental treatment is reimbursed up to 300 dollars per year after a waiting period of six months.
""",
    "franchise.md": """---
file_id: car-franchise
title: فرانشیز بیمه بدنه
domain: auto
---
# فرانشیز بیمه بدنه

فرانشیز خسارت اول ۱۰ درصد و خسارت دوم ۲۰ درصد مبلغ خسارت است.
""",
}


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A --home with the four documents ingested; environment and library caches restored afterwards."""
    root = tmp_path_factory.mktemp("search-cli")
    corpus = root / "corpus"
    corpus.mkdir()
    for name, text in DOCS.items():
        (corpus / name).write_text(text, encoding="utf-8")
    agent_home = root / "home"
    with pytest.MonkeyPatch.context() as mp:
        # The CLI derives the store from --home; nothing from another test may point elsewhere.
        for name in ("AGENT_QDRANT_URL", "AGENT_QDRANT_PATH", "AGENT_COLLECTION", "AGENT_LATE_MODEL", "AGENT_TOP_K",
                     "AGENT_EMBEDDING_STORE"):
            mp.delenv(name, raising=False)
        # The CLI writes these into os.environ; recording them here restores them on exit.
        mp.setenv("AGENT_HOME", str(agent_home))
        mp.setenv("AGENT_LOG_FILE", str(agent_home / "agent.log"))
        mp.setenv("HF_HUB_OFFLINE", "1")
        index.reset_caches()
        assert cli.main(["--home", str(agent_home), "ingest", str(corpus), "--tenant", TENANT]) == 0
        yield agent_home
        index.reset_caches()


def run(capsys, home, *args):
    """(exit code, parsed stdout lines, stderr) of `agent --home HOME search ...`."""
    capsys.readouterr()
    code = cli.main(["--home", str(home), "search", *args])
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == len(out.splitlines())  # every stdout line is one JSON object
    return code, lines, err


def test_one_json_line_best_first(capsys, home):
    code, lines, _ = run(capsys, home, "cracked windscreen repair", "--tenant", TENANT, "--roles", "admin")
    assert code == 0
    [line] = lines
    assert line["query"] == "cracked windscreen repair"
    hits = line["hits"]
    assert hits and hits[0]["file_id"] == "windscreen"
    assert hits[0]["chunk_id"] == "windscreen#0" and hits[0]["title"] == "Windscreen cover"
    for hit in hits:
        assert set(hit) == {"chunk_id", "file_id", "title", "score"}
        assert isinstance(hit["score"], float) and hit["chunk_id"].startswith(hit["file_id"] + "#")
    scores = [hit["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert len({hit["chunk_id"] for hit in hits}) == len(hits)


def test_k_limits_the_hits(capsys, home):
    code, [line], _ = run(capsys, home, "cover", "--tenant", TENANT, "--roles", "admin", "--k", "2")
    assert code == 0 and len(line["hits"]) == 2


def test_queries_file_gives_one_line_per_query_in_order(capsys, home, tmp_path):
    queries = ["dental treatment waiting period", "", "   ", "فرانشیز خسارت دوم چند درصد است؟", "windscreen deductible"]
    path = tmp_path / "queries.txt"
    path.write_text("\n".join(queries) + "\n", encoding="utf-8")
    code, lines, _ = run(capsys, home, "--queries", str(path), "--tenant", TENANT)
    assert code == 0
    assert [line["query"] for line in lines] == [q for q in queries if q.strip()]
    assert [line["hits"][0]["file_id"] for line in lines] == ["dental", "car-franchise", "windscreen"]


def test_roles_filter(capsys, home):
    query = "claims above 90 million rials fraud desk"
    code, [line], _ = run(capsys, home, query, "--tenant", TENANT, "--roles", "user", "--k", "10")
    assert code == 0
    assert "fraud-desk" not in {hit["file_id"] for hit in line["hits"]}
    for roles in ("officer", "admin", "user, officer"):
        _, [line], _ = run(capsys, home, query, "--tenant", TENANT, "--roles", roles)
        assert line["hits"][0]["file_id"] == "fraud-desk"
    # An unknown role is refused with the field and the allowed values, before any query runs.
    for roles in ("user,superuser", "nobody"):
        code, lines, err = run(capsys, home, query, "--tenant", TENANT, "--roles", roles)
        assert code == 2 and lines == []
        assert "--roles" in err and "allowed: user, officer, admin" in err


def test_domain_filter(capsys, home):
    _, [line], _ = run(capsys, home, "dental treatment reimbursed", "--tenant", TENANT, "--roles", "admin",
                       "--domain", "auto", "--k", "10")
    assert line["hits"] and {hit["file_id"] for hit in line["hits"]} <= {"windscreen", "fraud-desk", "car-franchise"}
    _, [line], _ = run(capsys, home, "windscreen", "--tenant", TENANT, "--roles", "admin", "--domain", "health", "--k", "10")
    assert {hit["file_id"] for hit in line["hits"]} == {"dental"}


def test_other_tenant_sees_nothing(capsys, home):
    code, [line], _ = run(capsys, home, "windscreen", "--tenant", "globex", "--roles", "admin")
    assert code == 0 and line["hits"] == []


@pytest.mark.parametrize(
    ("query", "message"),
    [("", "query is empty"), ("   ", "query is empty"), ("x" * 2001, "query is longer than 2000 characters")],
    ids=["empty", "blank", "over-long"],
)
def test_invalid_query_is_an_error_line_and_a_non_zero_exit(capsys, home, query, message):
    code, [line], _ = run(capsys, home, query, "--tenant", TENANT)
    assert code != 0
    assert line == {"query": query, "error": message}


def test_an_invalid_query_in_a_file_does_not_stop_the_others(capsys, home, tmp_path):
    path = tmp_path / "queries.txt"
    path.write_text(f"windscreen\n{'y' * 2001}\ndental\n", encoding="utf-8")
    code, lines, _ = run(capsys, home, "--queries", str(path), "--tenant", TENANT)
    assert code != 0
    assert [sorted(line) for line in lines] == [["hits", "query"], ["error", "query"], ["hits", "query"]]
    assert "longer than" in lines[1]["error"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "needs a QUERY or --queries FILE"),
        (("--queries", "/nonexistent/queries.txt"), "cannot read queries file"),
        (("--k", "0", "windscreen"), None),
        (("--k", "51", "windscreen"), None),
    ],
    ids=["nothing", "missing-file", "k-zero", "k-too-large"],
)
def test_usage_errors(capsys, home, args, message):
    code, lines, err = run(capsys, home, *args, "--tenant", TENANT)
    assert code != 0
    if message:
        assert lines == [] and message in err
    else:
        [line] = lines
        assert "k must be between 1 and 50" in line["error"]


def test_bad_tenant_is_an_error_line(capsys, home):
    code, [line], _ = run(capsys, home, "windscreen", "--tenant", "no such tenant!")
    assert code != 0 and "tenant_id" in line["error"]


def test_empty_queries_file(capsys, home, tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("\n  \n", encoding="utf-8")
    code, lines, err = run(capsys, home, "--queries", str(path), "--tenant", TENANT)
    assert code != 0 and lines == [] and "no queries" in err


def test_ingest_leaves_the_first_turns_exemplar_store_in_the_home(capsys, home):
    """A home's first chat reads the triage exemplars' vectors instead of embedding them (docs/local-stack.md)."""
    store = home / "cache" / "exemplar_embeddings.npz"
    assert store.is_file()
    written = store.stat().st_mtime_ns
    corpus = home.parent / "corpus"
    assert cli.main(["--home", str(home), "ingest", str(corpus), "--tenant", TENANT]) == 0
    assert store.stat().st_mtime_ns == written  # current: not embedded or written again
