#!/usr/bin/env bash
# A private Docker engine for skillci's Docker-runner tests (and for trying the Docker runner).
#
#   eval "$(bash scripts/ci_docker.sh start)"   # prints `export DOCKER_HOST=... DOCKER_CONFIG=...`
#   bash scripts/ci_docker.sh stop              # stops the engine this script started
#   bash scripts/ci_docker.sh status            # prints what is running and cached
#
# What `start` does (root only; every step is skipped when its result already exists):
#  1. apt-get installs docker.io and debootstrap when dockerd/debootstrap are missing.
#  2. Builds the base root filesystem once per recipe and caches it as a tarball in
#     $SKILLCI_CI_CACHE (default /var/cache/skillci-ci): `debootstrap --variant=minbase` of
#     this machine's Debian/Ubuntu release from the mirror its apt sources name (read at run
#     time), plus python3, pip, git and pytest==8.3.3 (wheels fetched by the host's pip),
#     with the apt sources emptied and PEP 668's marker removed, so the bundled tasks'
#     Dockerfiles (`pip install pytest==8.3.3`, `apt-get install git`) build offline: every
#     package they ask for is already there.
#  3. Starts dockerd (overlay2, falling back to vfs) with no bridge and no iptables: trial
#     containers run with network_mode=none anyway. Its data root lives in the cache dir, so
#     task images built by one run are reused by the next on the same machine.
#  4. `docker import`s the tarball and tags it as the base the bundled tasks' Dockerfiles
#     name (python:3.11-slim) unless an image with the same recipe label is already there.
#  5. Installs the Docker Compose v2 plugin Harbor's docker environment needs into the cache
#     (scripts/ci_compose.sh: a pinned Debian trixie .deb, SHA256-checked) and exports
#     DOCKER_CONFIG pointing at a dir whose cli-plugins/ holds it (no system dir touched),
#     and SKILLCI_DOCKER_BUILD_NETWORK=none (image builds' RUN steps get no network: the
#     engine has no default bridge, and the base already holds what the tasks install).
#
# Errors go to stderr with the log to read; the exit code is non-zero.
set -euo pipefail

BASE_TAG=${SKILLCI_DOCKER_BASE_TAG:-python:3.11-slim}
CACHE=${SKILLCI_CI_CACHE:-/var/cache/skillci-ci}
RUN_DIR=${SKILLCI_CI_RUN_DIR:-/tmp/skillci-ci-docker}
SOCK="$RUN_DIR/docker.sock"
PIDFILE="$RUN_DIR/dockerd.pid"
LOG="$RUN_DIR/dockerd.log"
PYTEST_VERSION=8.3.3
PACKAGES=python3,python-is-python3,python3-pip,git,ca-certificates,procps
RECIPE_VERSION=1

say() { printf 'ci_docker: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

engine_up() { DOCKER_HOST="unix://$SOCK" timeout 10 docker info >/dev/null 2>&1; }

os_field() { # os_field VERSION_CODENAME
  # shellcheck disable=SC1091
  (. /etc/os-release && eval "printf '%s' \"\${$1:-}\"")
}

# The mirror URI apt uses for this release's main suite (deb822 .sources or one-line lists).
apt_mirror() {
  local codename=$1 f uri
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    uri=$(awk -v c="$codename" '
      BEGIN { RS=""; FS="\n" }
      {
        u=""; s=""; t=""
        for (i = 1; i <= NF; i++) {
          if ($i ~ /^URIs:/) { u=$i; sub(/^URIs:[ \t]*/, "", u); split(u, a, /[ \t]+/); u=a[1] }
          if ($i ~ /^Suites:/) { s=" " $i " " }
          if ($i ~ /^Types:/) { t=$i }
        }
        if (u != "" && t ~ /deb( |$)/ && s ~ (" " c " ")) { print u; exit }
      }' "$f")
    [ -n "$uri" ] && { printf '%s\n' "$uri"; return 0; }
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    uri=$(awk -v c="$codename" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } if ($(i + 1) == c) { print $i; exit } }' "$f")
    [ -n "$uri" ] && { printf '%s\n' "$uri"; return 0; }
  done
  return 1
}

install_tools() {
  local need=()
  command -v dockerd >/dev/null 2>&1 || need+=(docker.io)
  command -v debootstrap >/dev/null 2>&1 || need+=(debootstrap)
  command -v docker >/dev/null 2>&1 || need+=(docker.io)
  ((${#need[@]})) || return 0
  say "installing ${need[*]}"
  apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
}

recipe_id() {
  printf '%s|%s|%s|%s|%s' "$RECIPE_VERSION" "$(os_field VERSION_CODENAME)" "$(dpkg --print-architecture)" \
    "$PACKAGES" "$PYTEST_VERSION" | sha256sum | cut -c1-16
}

build_rootfs() { # build_rootfs TARBALL
  local out=$1 codename mirror work
  CHROOT=$(command -v chroot) || die "chroot not found"
  codename=$(os_field VERSION_CODENAME)
  [ -n "$codename" ] || die "no VERSION_CODENAME in /etc/os-release: cannot pick a release for debootstrap"
  mirror=$(apt_mirror "$codename") || die "no apt source for '$codename' in /etc/apt/sources.list(.d): cannot pick a mirror"
  work=$(mktemp -d "$CACHE/rootfs.XXXXXX")
  say "debootstrap --variant=minbase $codename from $mirror (a few minutes, once per machine)"
  if ! debootstrap --variant=minbase --include="$PACKAGES" "$codename" "$work/root" "$mirror" \
    >"$work/debootstrap.log" 2>&1; then
    tail -n 20 "$work/debootstrap.log" >&2
    die "debootstrap failed (full log: $work/debootstrap.log)"
  fi
  local pyver
  pyver=$(env -i PATH=/usr/bin:/bin "$CHROOT" "$work/root" python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  say "python3 in the base is $pyver"
  mkdir -p "$work/root/tmp/wheels"
  python3 -m pip download -q --only-binary=:all: --python-version "$pyver" --implementation py \
    -d "$work/root/tmp/wheels" "pytest==$PYTEST_VERSION" 2>&1 | grep -v 'is ignored' >&2 || true
  ls "$work/root/tmp/wheels"/pytest-*.whl >/dev/null 2>&1 || die "could not download pytest==$PYTEST_VERSION wheels with the host's pip"
  env -i PATH=/usr/local/bin:/usr/bin:/bin "$CHROOT" "$work/root" python3 -m pip install -q \
    --no-index --find-links /tmp/wheels --break-system-packages --root-user-action=ignore \
    "pytest==$PYTEST_VERSION" >&2
  rm -rf "$work/root/tmp/wheels"
  # Offline by construction: no apt sources (apt-get update succeeds with nothing to fetch,
  # apt-get install of an installed package is a no-op) and pip may install system-wide.
  rm -f "$work/root"/usr/lib/python3*/EXTERNALLY-MANAGED
  : >"$work/root/etc/apt/sources.list"
  rm -f "$work/root"/etc/apt/sources.list.d/*
  rm -rf "$work/root"/var/cache/apt/archives/*.deb "$work/root"/var/lib/apt/lists/* \
    "$work/root"/usr/share/doc/* "$work/root"/usr/share/man/* "$work/root"/usr/share/locale/*
  tar -C "$work/root" -cf "$work/rootfs.tar" .
  mv "$work/rootfs.tar" "$out"
  rm -rf "$work"
  find "$CACHE" -maxdepth 1 -name 'base-*.tar' ! -name "$(basename "$out")" -delete
}

start_dockerd() { # start_dockerd DRIVER
  local driver=$1
  mkdir -p "$RUN_DIR" "$CACHE/docker-$driver"
  rm -f "$SOCK"
  if [ -f "$PIDFILE" ] && ! kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then rm -f "$PIDFILE"; fi
  nohup dockerd --storage-driver "$driver" --iptables=false --ip-masq=false --bridge=none \
    --host "unix://$SOCK" --data-root "$CACHE/docker-$driver" --exec-root "$RUN_DIR/exec" \
    --pidfile "$PIDFILE" >"$LOG" 2>&1 </dev/null &
  local i
  for i in $(seq 1 60); do
    engine_up && return 0
    kill -0 "$!" 2>/dev/null || break
    sleep 0.5
  done
  kill "$!" 2>/dev/null || true
  wait "$!" 2>/dev/null || true
  return 1
}

cmd_start() {
  [ "$(id -u)" = 0 ] || die "must run as root (dockerd, debootstrap and chroot need it)"
  mkdir -p "$CACHE" "$RUN_DIR"
  install_tools
  local rid tarball
  rid=$(recipe_id)
  tarball="$CACHE/base-$rid.tar"
  if [ ! -s "$tarball" ]; then
    build_rootfs "$tarball"
  fi
  if ! engine_up; then
    if ! start_dockerd overlay2; then
      say "dockerd with overlay2 did not come up: $(grep -m1 -iE 'error|fatal' "$LOG" || tail -n1 "$LOG")"
      say "retrying with the vfs storage driver (slower: every container copies its image)"
      start_dockerd vfs || {
        tail -n 20 "$LOG" >&2
        die "dockerd did not start (log: $LOG)"
      }
    fi
  fi
  export DOCKER_HOST="unix://$SOCK"
  local have
  have=$(docker image inspect -f '{{ index .Config.Labels "skillci.base" }}' "$BASE_TAG" 2>/dev/null || true)
  if [ "$have" != "$rid" ]; then
    say "importing the base image as $BASE_TAG"
    docker import -c 'CMD ["bash"]' -c 'ENV LANG=C.UTF-8' -c "LABEL skillci.base=$rid" \
      "$tarball" "$BASE_TAG" >/dev/null
  fi
  local docker_config
  docker_config=$(bash "$(dirname "$0")/ci_compose.sh")
  # This engine has no default bridge: image builds' RUN steps get no network (BuildKit
  # would look for the bridge and fail), which the offline base makes enough.
  printf 'export DOCKER_HOST=%q DOCKER_CONFIG=%q SKILLCI_DOCKER_BUILD_NETWORK=none\n' \
    "$DOCKER_HOST" "$docker_config"
}

cmd_stop() {
  [ -f "$PIDFILE" ] || { say "no dockerd started by this script"; return 0; }
  local pid
  pid=$(cat "$PIDFILE")
  if kill -0 "$pid" 2>/dev/null; then
    DOCKER_HOST="unix://$SOCK" docker ps -aq --filter label=skillci.trial 2>/dev/null |
      xargs -r env DOCKER_HOST="unix://$SOCK" docker rm -f >/dev/null 2>&1 || true
    kill "$pid"
    for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  fi
  rm -f "$PIDFILE"
}

cmd_status() {
  if engine_up; then
    say "engine up at unix://$SOCK ($(DOCKER_HOST="unix://$SOCK" docker info -f '{{.Driver}}'))"
    DOCKER_HOST="unix://$SOCK" docker images >&2
  else
    say "no engine at unix://$SOCK"
  fi
  ls -l "$CACHE" >&2 2>/dev/null || true
}

case "${1:-start}" in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  *) die "usage: $0 start|stop|status" ;;
esac
