#!/usr/bin/env bash
# Rebuilds web/static/basemap.svg, the datasets page's offline world map, from the npm
# package world-atlas (Natural Earth 1:110m countries; see NOTICE). Needs npm and Go.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent world-atlas@2.0.2 >/dev/null && tar xzf world-atlas-2.0.2.tgz)
go run ./web/gen/basemap -in "$tmp/package/countries-110m.json" -out web/static/basemap.svg
