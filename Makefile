# Two commands do all the set-up on a fresh machine:
#   make demo  - build .venv, ingest the sample corpus, run the demo conversation on the embedded stack
#   make test  - build .venv and run every test
# The first interpreter that really runs (a pyenv shim may exist without a selected version).
PYTHON ?= $(shell for p in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3.12 python3.11 python3; do \
	if $$p -c 'import sys; assert sys.version_info >= (3, 11)' >/dev/null 2>&1; then echo $$p; break; fi; done)
VENV := .venv
BIN := $(VENV)/bin
AGENT_HOME ?= $(CURDIR)/.agent
export AGENT_HOME
export HF_HUB_OFFLINE := 1

.PHONY: venv demo test lint validate bench clean sam-build package-sizes lambda-up lambda-down test-lambda bench-law

# The container tier (docs/packaging.md). `sam build` wants a python3.12 on PATH: the first one found.
PY312 ?= $(shell for p in python3.12 $$HOME/.pyenv/versions/3.12*/bin/python3.12; do \
	if $$p -c 'import sys; assert sys.version_info[:2] == (3, 12)' >/dev/null 2>&1; then command -v $$p; break; fi; done)
SAM_PATH = $(dir $(PY312)):$(CURDIR)/$(BIN):$(PATH)
SAM := env PATH="$(SAM_PATH)" SAM_CLI_TELEMETRY=0 $(CURDIR)/$(BIN)/sam

$(BIN)/agent: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(BIN)/agent

venv: $(BIN)/agent

demo: venv
	rm -rf $(AGENT_HOME)
	$(BIN)/agent ingest samples/corpus/sepehr --tenant sepehr
	$(BIN)/agent ingest samples/corpus/kavir --tenant kavir
	$(BIN)/agent accounts load samples/accounts.json
	$(BIN)/agent converse --pretty samples/conversations/demo.json

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

# Local Lambda runtime: Docker engine + python3.12 base image (idempotent); lambda-down stops only what it started.
lambda-up:
	containers/lambda-runtime.sh up

lambda-down:
	containers/lambda-runtime.sh down

# Every function in its own container: events/ through `sam local invoke`, then the demo conversation
# through the real ASL with each Task sent to `sam local start-lambda`, checked against the in-process run.
test-lambda: venv lambda-up
	env PATH="$(SAM_PATH)" PY312=$(PY312) SAM_CLI_TELEMETRY=0 $(BIN)/python -m agent_local.lambda_tier test

clean:
	rm -rf $(AGENT_HOME) .pytest_cache

# Answer quality on real insurance statutes (a development set kept outside the repository):
#   make bench-law LAW_BENCH=path/to/insurance-law-fa
LAW_BENCH ?= ../shared/bench/insurance-law-fa
bench-law: venv
	$(BIN)/python benchmarks/insurance_law_fa.py --data $(LAW_BENCH) $(BENCH_ARGS)
