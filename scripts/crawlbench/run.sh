#!/bin/sh
# Crawl benchmark of issue 12: sonda with everything on (store, WARC, dedup, index) against
# a tuned Colly crawler that stores nothing, on one loopback web of realistic pages, in the
# same run. Run from the repository root:
#
#	scripts/crawlbench/run.sh            # 200 hosts x ~100 pages of ~11 KB real prose
#	HOSTS=20 PAGES=50 scripts/crawlbench/run.sh
#
# The web is `sonda testweb --bench --corpus` over the Dragnet main texts of the shared test
# data (CORPUS), served by its own process; each crawler runs as its own process under
# /usr/bin/time, so its CPU time and peak RSS are its own. One connection per host, no
# delay. Wall time includes writing the rest of the index and PageRank at the end (sonda
# exits once everything is persisted).
set -eu
HOSTS=${HOSTS:-200}
PAGES=${PAGES:-100}
CONC=${CONC:-256}
PORT=${PORT:-18931}
CORPUS=${CORPUS:-../shared/testdata/dragnet/gold}
MODES=${MODES:-"async off sync"}
[ -d "$CORPUS" ] || { echo "no corpus at $CORPUS (the shared test data's dragnet/gold)" >&2; exit 2; }
OUT=$(mktemp -d /tmp/crawlbench.XXXXXX)
go build -o "$OUT/sonda" ./cmd/sonda
(cd scripts/crawlbench/colly && go build -o "$OUT/colly-baseline" .)
"$OUT/sonda" testweb --bench --hosts "$HOSTS" --pages "$PAGES" --corpus "$CORPUS" --addr 127.0.0.1:$PORT >"$OUT/web.log" 2>&1 &
WEB=$!
trap 'kill $WEB 2>/dev/null' EXIT
i=0
until grep -q '^seeds:' "$OUT/web.log"; do i=$((i+1)); [ $i -lt 100 ] || { cat "$OUT/web.log"; exit 1; }; sleep 0.1; done
SEEDS=$(sed -n 's/^seeds: *//p' "$OUT/web.log")
echo "web: $HOSTS hosts, ~$PAGES pages each, corpus $CORPUS; load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"

measure() { # name command...: prints wall, CPU, RSS from /usr/bin/time
	name=$1; shift
	/usr/bin/time -f "%e %U %S %M" -o "$OUT/$name.time" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err" || { cat "$OUT/$name.err"; exit 1; }
}
report() { # name pages
	read -r wall user sys rss <"$OUT/$1.time"
	awk -v n="$1" -v p="$2" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" 'BEGIN {
		printf "%-14s %6d pages  wall %6.1fs  %6.0f pages/s  CPU %6.1fs  %5.2f ms CPU/page  peak RSS %4.0f MiB\n", n, p, w, p/w, u+s, 1000*(u+s)/p, r/1024 }'
}

measure colly "$OUT/colly-baseline" -resolve 127.0.0.1:$PORT -parallel "$CONC" $SEEDS
report colly "$(sed -n 's/^colly: \([0-9]*\) pages.*/\1/p' "$OUT/colly.out")"
grep '^colly:' "$OUT/colly.out"

for mode in $MODES; do
	args=""
	for s in $SEEDS; do args="$args --seed $s"; done
	SONDA_SCOPE_FOLLOW=any SONDA_LOG_LEVEL=warn measure "sonda-$mode" "$OUT/sonda" crawl --data "$OUT/data-$mode" \
		--allow-private --resolve "*.test=127.0.0.1:$PORT" --min-delay 0 --concurrency "$CONC" --index "$mode" \
		--profile "$OUT/sonda-$mode.pprof" $args
	pages=$(sed -n 's/.*[^0-9]\([0-9][0-9]*\) pages fetched.*/\1/p' "$OUT/sonda-$mode.out" | head -1)
	report "sonda-$mode" "${pages:-0}"
	grep -E 'pages/s|pages fetched' "$OUT/sonda-$mode.out" | head -2 | sed 's/^/    /'
	sed -n '/^CPU profile/,$p' "$OUT/sonda-$mode.err" | sed 's/^/    /'
done
echo "outputs in $OUT"
