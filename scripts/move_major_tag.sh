#!/usr/bin/env bash
# Move the major-version tag (v0 for v0.3.1) to COMMIT on GitHub: the tag that
# `uses: skillci/skillci@v0` and the reusable workflows' callers resolve. Through the REST API
# (git/refs), so the release job keeps no git credentials in its checkout. A tag other than
# vX.Y.Z is invalid input (exit 2); an API failure is external (exit 4).
#
#   GH_TOKEN=… GITHUB_REPOSITORY=owner/name bash scripts/move_major_tag.sh vX.Y.Z COMMIT
#   GITHUB_API_URL: default https://api.github.com (set on Actions runners)
set -euo pipefail
tag=${1:?usage: move_major_tag.sh vX.Y.Z COMMIT} sha=${2:?usage: move_major_tag.sh vX.Y.Z COMMIT}
[[ $tag =~ ^v(0|[1-9][0-9]*)\.[0-9]+\.[0-9]+$ ]] || { echo "error: tag '$tag' is not vX.Y.Z" >&2; exit 2; }
major="v${BASH_REMATCH[1]}"
[[ $sha =~ ^[0-9a-f]{40}$ ]] || { echo "error: '$sha' is not a full commit sha" >&2; exit 2; }
api="${GITHUB_API_URL:-https://api.github.com}/repos/${GITHUB_REPOSITORY:?set GITHUB_REPOSITORY=owner/name}/git"
# the token goes to curl on a pipe, not on its command line
call() { curl -sS -o "$out" -w '%{http_code}' -H @- "$@" <<<"Authorization: Bearer ${GH_TOKEN:?set GH_TOKEN}
Accept: application/vnd.github+json
X-GitHub-Api-Version: 2022-11-28"; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
code=$(call "$api/ref/tags/$major")
if [[ $code == 200 ]]; then
  code=$(call -X PATCH "$api/refs/tags/$major" -d "{\"sha\":\"$sha\",\"force\":true}")
  verb=moved
elif [[ $code == 404 ]]; then
  code=$(call -X POST "$api/refs" -d "{\"ref\":\"refs/tags/$major\",\"sha\":\"$sha\"}")
  verb=created
fi
[[ $code == 200 || $code == 201 ]] ||
  { echo "error: GitHub answered $code for tag $major: $(head -c 500 "$out")" >&2; exit 4; }
echo "$verb $major -> $sha ($tag)"
