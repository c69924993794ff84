#!/usr/bin/env bash
# The Docker Compose v2 CLI plugin (`docker compose`) for Harbor's docker environment, without
# touching system dirs: Debian bookworm's docker.io has no compose v2 (bookworm packages only
# compose v1), Debian trixie packages it as docker-compose 2.26.1 (a static-ish Go binary that
# needs only libc6 >= 2.34, which bookworm has).
#
#   bash scripts/ci_compose.sh          # prints the DOCKER_CONFIG dir to use; idempotent
#
# Once per machine: downloads the pinned .deb from the Debian mirror into $SKILLCI_CI_CACHE
# (default /var/cache/skillci-ci), checks its SHA256 against the pin (the value trixie's
# Packages index lists for that version; a mismatch fails loudly and keeps nothing), extracts
# it with `dpkg-deb -x`, and links the plugin as <cache>/docker-config/cli-plugins/docker-compose.
# Exporting DOCKER_CONFIG=<cache>/docker-config makes every docker CLI (20.10 and later) find
# it; scripts/ci_docker.sh start prints that export.
set -euo pipefail

COMPOSE_VERSION=2.26.1-4
# SHA256 of pool/main/d/docker-compose/docker-compose_2.26.1-4_amd64.deb, as
# dists/trixie/main/binary-amd64/Packages lists it (checked 2026-12-04).
COMPOSE_SHA256=47681197cb2b1ab88206b42a1a92fc75f50d9530a6322d03494a473eed0408ea
MIRROR=${SKILLCI_DEBIAN_MIRROR:-http://deb.debian.org/debian}
CACHE=${SKILLCI_CI_CACHE:-/var/cache/skillci-ci}

say() { printf 'ci_compose: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

arch=$(dpkg --print-architecture)
[ "$arch" = amd64 ] || die "only the amd64 .deb is pinned (this machine is $arch): add its SHA256 from trixie's Packages index"
deb_name="docker-compose_${COMPOSE_VERSION}_${arch}.deb"
root="$CACHE/compose-$COMPOSE_VERSION"
plugin="$root/usr/libexec/docker/cli-plugins/docker-compose"
config="$CACHE/docker-config"

if [ ! -x "$plugin" ]; then
  mkdir -p "$CACHE"
  work=$(mktemp -d "$CACHE/compose.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  url="$MIRROR/pool/main/d/docker-compose/$deb_name"
  say "downloading $url"
  curl -fsSL --retry 3 -o "$work/$deb_name" "$url" ||
    die "could not download $url (a newer trixie point release may have replaced $COMPOSE_VERSION: update the pin from dists/trixie/main/binary-amd64/Packages)"
  got=$(sha256sum "$work/$deb_name" | cut -d' ' -f1)
  [ "$got" = "$COMPOSE_SHA256" ] ||
    die "$deb_name has SHA256 $got, expected $COMPOSE_SHA256 (the pin from trixie's Packages index): refusing it"
  dpkg-deb -x "$work/$deb_name" "$work/root"
  [ -x "$work/root/usr/libexec/docker/cli-plugins/docker-compose" ] || die "$deb_name holds no usr/libexec/docker/cli-plugins/docker-compose"
  rm -rf "$root"
  mv "$work/root" "$root"
fi
mkdir -p "$config/cli-plugins"
ln -sfn "$plugin" "$config/cli-plugins/docker-compose"
"$config/cli-plugins/docker-compose" version >/dev/null 2>&1 || die "$plugin does not run on this machine"
printf '%s\n' "$config"
