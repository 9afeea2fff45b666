#!/usr/bin/env bash
# The local Lambda runtime: a Docker engine and the python3.12 base image that `sam local` runs each
# function in. Public container registries are unreachable, so the base image is built here from
# Debian packages (debootstrap) plus the project's Python 3.12 and awslambdaric from PyPI, and tagged
# with the name SAM looks for. Always run SAM with --skip-pull-image.
#
#   containers/lambda-runtime.sh up     idempotent: install, start dockerd if none runs, build the image if absent
#   containers/lambda-runtime.sh down   stop only what `up` started (dockerd, when it started it)
#   containers/lambda-runtime.sh image  (re)build the base image
#
# State (pid files, logs, the root filesystem cache) lives in $LAMBDA_STATE (default .lambda/).
set -euo pipefail
cd "$(dirname "$0")/.."

IMAGE=${LAMBDA_BASE_IMAGE:-public.ecr.aws/lambda/python:3.12-x86_64}
STATE=${LAMBDA_STATE:-$PWD/.lambda}
SUITE=${LAMBDA_DEBIAN_SUITE:-bookworm}
MIRROR=${LAMBDA_DEBIAN_MIRROR:-$(grep -rhoE '(URIs:|^deb) +https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
	| grep -oE 'https?://[^ ]+' | head -1 || true)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
mkdir -p "$STATE"

log() { printf 'lambda-runtime: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# The interpreter the image carries: the same CPython 3.12 the Makefile builds .venv with.
python312() {
	local p
	for p in ${LAMBDA_PYTHON:-} "$HOME"/.pyenv/versions/3.12*/bin/python3.12 /usr/bin/python3.12 /usr/local/bin/python3.12; do
		[ -n "$p" ] && [ -x "$p" ] && "$p" -c 'import sys, ssl, ctypes, sqlite3; assert sys.version_info[:2] == (3, 12)' 2>/dev/null \
			&& { echo "$p"; return; }
	done
	die "no CPython 3.12 found (set LAMBDA_PYTHON to one)"
}

install_tools() {
	local missing=()
	command -v dockerd >/dev/null || missing+=(docker.io)
	command -v debootstrap >/dev/null || missing+=(debootstrap)
	[ ${#missing[@]} -eq 0 ] && return
	log "installing ${missing[*]} from Debian"
	[ "$(id -u)" = 0 ] || die "installing ${missing[*]} needs root"
	DEBIAN_FRONTEND=noninteractive apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

start_dockerd() {
	if docker info >/dev/null 2>&1; then
		if [ -f "$STATE/dockerd.pid" ] && kill -0 "$(cat "$STATE/dockerd.pid")" 2>/dev/null; then
			log "dockerd (started by this script, pid $(cat "$STATE/dockerd.pid")) is running"
		else
			rm -f "$STATE/dockerd.pid"
			log "a Docker engine is already running (not started here: \`down\` leaves it)"
		fi
		return
	fi
	[ "$(id -u)" = 0 ] || die "starting dockerd needs root"
	log "starting dockerd (overlay2, default bridge); log in $STATE/dockerd.log"
	setsid dockerd --storage-driver overlay2 >"$STATE/dockerd.log" 2>&1 < /dev/null &
	echo $! >"$STATE/dockerd.pid"
	for _ in $(seq 1 60); do
		docker info >/dev/null 2>&1 && return
		kill -0 "$(cat "$STATE/dockerd.pid")" 2>/dev/null || { tail -20 "$STATE/dockerd.log" >&2; die "dockerd exited"; }
		sleep 1
	done
	die "dockerd did not answer within 60 s (see $STATE/dockerd.log)"
}

build_image() {
	local py prefix rootfs
	py=$(python312)
	prefix=$("$py" -c 'import sys; print(sys.base_prefix)')
	rootfs="$STATE/rootfs"
	if [ ! -f "$STATE/rootfs.tar" ]; then
		log "debootstrap $SUITE from $MIRROR (a few minutes, cached in $STATE/rootfs.tar)"
		rm -rf "$rootfs"
		debootstrap --variant=minbase \
			--include=ca-certificates,libssl3,libffi8,libsqlite3-0,zlib1g,libbz2-1.0,liblzma5,libuuid1,libreadline8,libncursesw6,libexpat1,libgomp1 \
			"$SUITE" "$rootfs" "$MIRROR" >"$STATE/debootstrap.log" 2>&1 \
			|| { tail -20 "$STATE/debootstrap.log" >&2; die "debootstrap failed"; }
		rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
		tar -C "$rootfs" -cf "$STATE/rootfs.tar" .
		rm -rf "$rootfs"
	fi
	rm -rf "$rootfs" && mkdir -p "$rootfs"
	tar -C "$rootfs" -xf "$STATE/rootfs.tar"
	log "adding CPython $("$py" -c 'import platform; print(platform.python_version())') from $prefix as /var/lang"
	mkdir -p "$rootfs/var/lang" "$rootfs/var/runtime" "$rootfs/var/task" "$rootfs/opt"
	# The interpreter and its standard library only; not the site-packages of the host's copy.
	tar -C "$prefix" --exclude='lib/python3.12/site-packages/*' --exclude='lib/python3.12/test' \
		--exclude='lib/python3.12/idlelib' --exclude='lib/python3.12/tkinter' \
		--exclude='lib/python3.12/ensurepip' --exclude='lib/python3.12/lib2to3' \
		--exclude='lib/python3.12/config-3.12-*' --exclude='lib/pkgconfig' -cf - bin/python3.12 lib \
		| tar -C "$rootfs/var/lang" -xf -
	ln -sf python3.12 "$rootfs/var/lang/bin/python3"
	ln -sf python3.12 "$rootfs/var/lang/bin/python"
	# The runtime interface client, as in the real image (/var/runtime), from PyPI.
	"$py" -m pip install --quiet --disable-pip-version-check --only-binary=:all: \
		--platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --implementation cp --python-version 3.12 \
		--target "$rootfs/var/runtime" awslambdaric boto3 >"$STATE/pip-runtime.log" 2>&1 \
		|| { tail -20 "$STATE/pip-runtime.log" >&2; die "pip could not install awslambdaric"; }
	cp containers/bootstrap "$rootfs/var/runtime/bootstrap"
	chmod 755 "$rootfs/var/runtime/bootstrap"
	chroot "$rootfs" /usr/bin/env LD_LIBRARY_PATH=/var/lang/lib PYTHONPATH=/var/runtime /var/lang/bin/python3.12 -c 'import ssl, ctypes, sqlite3, awslambdaric, boto3' \
		|| die "the image's Python cannot import its runtime (missing shared library?)"
	log "importing $IMAGE"
	tar -C "$rootfs" -cf - . | docker import \
		--change 'ENV PATH=/var/lang/bin:/usr/local/bin:/usr/bin:/bin' \
		--change 'ENV LD_LIBRARY_PATH=/var/lang/lib:/var/runtime:/var/task:/opt/lib' \
		--change 'ENV LAMBDA_TASK_ROOT=/var/task' \
		--change 'ENV LAMBDA_RUNTIME_DIR=/var/runtime' \
		--change 'ENV LANG=C.UTF-8' \
		--change 'ENV TZ=:/etc/localtime' \
		--change 'WORKDIR /var/task' \
		--change 'ENTRYPOINT ["/var/runtime/bootstrap"]' \
		- "$IMAGE" >/dev/null
	rm -rf "$rootfs"
	log "built $IMAGE ($(docker image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}'))"
}

up() {
	install_tools
	start_dockerd
	if docker image inspect "$IMAGE" >/dev/null 2>&1; then
		log "$IMAGE present"
	else
		build_image
	fi
}

down() {
	if [ -f "$STATE/dockerd.pid" ]; then
		local pid
		pid=$(cat "$STATE/dockerd.pid")
		if kill -0 "$pid" 2>/dev/null; then
			log "stopping the dockerd this script started (pid $pid)"
			kill "$pid"
			for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
		fi
		rm -f "$STATE/dockerd.pid"
	fi
}

case "${1:-up}" in
	up) up ;;
	down) down ;;
	image) install_tools; start_dockerd; build_image ;;
	*) die "usage: $0 up|down|image" ;;
esac
