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

.PHONY: venv demo test lint validate bench clean

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

clean:
	rm -rf $(AGENT_HOME) .pytest_cache
