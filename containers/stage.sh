#!/usr/bin/env bash
# Stage what a function image copies (containers/NODE/Dockerfile) under build/NODE-image/:
#   python/  its dependencies for python3.12 on Lambda's platform, and the packages it runs: the core,
#            the retrieval engine and its stemmer; Triage also every provider (both run it)
#   models/  model folders, from $RETRIEVE_MODELS_DIR when set (retrieve)
#   index/   an embedded Qdrant store, from $RETRIEVE_INDEX_DIR when set (retrieve, and triage for its
#            corpus scope; local runs only: on AWS both read the Qdrant server)
# Nothing is downloaded inside `docker build`: the container network reaches no registry.
# Every package is pinned by containers/NODE/requirements.lock (`make lock`).
#   usage: containers/stage.sh NODE...      (PYTHON: a python3.12 with pip)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3.12}
PLATFORM=(--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64
	--implementation cp --python-version 3.12 --only-binary=:all:)
PIP=("$PYTHON" -m pip install --quiet --disable-pip-version-check)

for node in "$@"; do
	spec=containers/$node
	out=build/$node-image
	[ -f "$spec/requirements.txt" ] || { echo "stage: no $spec/requirements.txt" >&2; exit 1; }
	[ -f "$spec/requirements.lock" ] || { echo "stage: no $spec/requirements.lock (make lock)" >&2; exit 1; }
	# A new lock stages again even when the requirement files are unchanged.
	stamp=$(cat "$spec"/requirements.txt "$spec"/pure-requirements.txt "$spec"/requirements.lock 2>/dev/null \
		| sha256sum | cut -c1-16)
	if [ "$(cat "$out/python/.stamp" 2>/dev/null)" != "$stamp" ]; then
		rm -rf "$out/python" && mkdir -p "$out/python"
		"${PIP[@]}" --target "$out/python" "${PLATFORM[@]}" -c "$spec/requirements.lock" -r "$spec/requirements.txt"
		if [ -f "$spec/pure-requirements.txt" ]; then
			"${PIP[@]}" --target "$out/python" --no-deps -c "$spec/requirements.lock" -r "$spec/pure-requirements.txt"
		fi
		rm -rf "$out/python/bin"
		echo "$stamp" >"$out/python/.stamp"
	fi
	packages=(layers/core/insurance_agent retrieval/insurance_search retrieval/insurance_text)
	if [ "$node" = triage ]; then packages+=(layers/offline/insurance_offline layers/llm/insurance_llm); fi
	for package in "${packages[@]}"; do
		rm -rf "$out/python/$(basename "$package")"
		cp -r "$package" "$out/python/"
		# Bytecode in the image: nothing is compiled at cold start.
		"$PYTHON" -m compileall -q -j 0 "$out/python/$(basename "$package")"
	done
	rm -rf "$out/models" "$out/index" && mkdir -p "$out/models" "$out/index"
	if [ "$node" = retrieve ] && [ -n "${RETRIEVE_MODELS_DIR:-}" ]; then cp -r "$RETRIEVE_MODELS_DIR"/. "$out/models/"; fi
	if { [ "$node" = retrieve ] || [ "$node" = triage ]; } && [ -n "${RETRIEVE_INDEX_DIR:-}" ]; then
		cp -r "$RETRIEVE_INDEX_DIR"/. "$out/index/"
		rm -f "$out/index/.lock" "$out/index/edge/.lock"
	fi
done
