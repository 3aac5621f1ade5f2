#!/bin/sh
# Crawl benchmark of issue 12: sonda with everything on (store, WARC, dedup, index) against
# a tuned Colly crawler that stores nothing, on one loopback web of realistic pages, in the
# same run. Run from the repository root:
#
#	scripts/crawlbench/run.sh            # 200 hosts x ~100 pages of ~11 KB real prose
#	HOSTS=20 PAGES=50 scripts/crawlbench/run.sh
#	BINS="old=/tmp/sonda-old new=/tmp/sonda-new" ROUNDS=2 MODES=async scripts/crawlbench/run.sh
#	COLLY=0 BINS=... scripts/crawlbench/run.sh   # A/B of sonda builds only, without the baseline
#
# BINS compares sonda binaries (name=path, built before from the commits to compare) in the
# same run, alternated ROUNDS times (default 1) so that a change of the machine's load
# falls on both; by default the tree's own sonda is built and measured. Each crawl's data
# folder is removed after it is measured unless KEEP=1.
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
ROUNDS=${ROUNDS:-1}
[ -d "$CORPUS" ] || { echo "no corpus at $CORPUS (the shared test data's dragnet/gold)" >&2; exit 2; }
OUT=$(mktemp -d /tmp/crawlbench.XXXXXX)
go build -o "$OUT/sonda" ./cmd/sonda
BINS=${BINS:-"sonda=$OUT/sonda"}
COLLY=${COLLY:-1} # 0: measure only the sonda builds (an A/B between them needs no baseline)
[ "$COLLY" = 0 ] || (cd scripts/crawlbench/colly && go build -o "$OUT/colly-baseline" .)
"$OUT/sonda" testweb --bench --hosts "$HOSTS" --pages "$PAGES" --corpus "$CORPUS" --addr 127.0.0.1:$PORT >"$OUT/web.log" 2>&1 &
WEB=$!
trap 'kill $WEB 2>/dev/null' EXIT
i=0
until grep -q '^seeds:' "$OUT/web.log"; do i=$((i+1)); [ $i -lt 100 ] || { cat "$OUT/web.log"; exit 1; }; sleep 0.1; done
SEEDS=$(sed -n 's/^seeds: *//p' "$OUT/web.log")
echo "web: $HOSTS hosts, ~$PAGES pages each, corpus $CORPUS; load $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"

rsssplit() { # pid of /usr/bin/time: samples its child's /proc status every 0.2 s until it exits;
	# prints the highest anonymous and file-backed resident memory seen and the split at the
	# highest total, in kB (file-backed: mostly the index segments scorch mmaps)
	ma=0 mf=0 pa=0 pf=0 pt=0
	while kill -0 "$1" 2>/dev/null; do
		c=$(pgrep -P "$1" | head -1)
		if [ -n "$c" ] && s=$(awk '/^RssAnon:/ {a=$2} /^RssFile:/ {f=$2} END {print a+0, f+0}' "/proc/$c/status" 2>/dev/null); then
			set -- "$1" $s
			[ "$2" -le "$ma" ] || ma=$2
			[ "$3" -le "$mf" ] || mf=$3
			[ $(($2 + $3)) -le "$pt" ] || { pt=$(($2 + $3)); pa=$2; pf=$3; }
			set -- "$1"
		fi
		sleep 0.2
	done
	echo "$ma $mf $pa $pf"
}
measure() { # name command...: prints wall, CPU, RSS from /usr/bin/time
	name=$1; shift
	/usr/bin/time -f "%e %U %S %M" -o "$OUT/$name.time" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err" &
	tp=$!
	rsssplit $tp >"$OUT/$name.rss" &
	sp=$!
	wait $tp || { cat "$OUT/$name.err"; exit 1; }
	wait $sp
}
report() { # name pages
	read -r wall user sys rss <"$OUT/$1.time"
	awk -v n="$1" -v p="$2" -v w="$wall" -v u="$user" -v s="$sys" -v r="$rss" 'BEGIN {
		printf "%-14s %6d pages  wall %6.1fs  %6.0f pages/s  CPU %6.1fs  %5.2f ms CPU/page  peak RSS %4.0f MiB\n", n, p, w, p/w, u+s, 1000*(u+s)/p, r/1024 }'
	read -r ma mf pa pf <"$OUT/$1.rss"
	awk -v ma="$ma" -v mf="$mf" -v pa="$pa" -v pf="$pf" 'BEGIN {
		printf "    RSS sampled: anonymous up to %.0f MiB, file-backed up to %.0f MiB; at the highest total %.0f + %.0f MiB\n", ma/1024, mf/1024, pa/1024, pf/1024 }'
}

if [ "$COLLY" != 0 ]; then
	measure colly "$OUT/colly-baseline" -resolve 127.0.0.1:$PORT -parallel "$CONC" $SEEDS
	report colly "$(sed -n 's/^colly: \([0-9]*\) pages.*/\1/p' "$OUT/colly.out")"
	grep '^colly:' "$OUT/colly.out"
fi

round=0
while [ $round -lt "$ROUNDS" ]; do
	round=$((round+1))
	for mode in $MODES; do
		for bin in $BINS; do
			name=${bin%%=*}-$mode
			[ "$ROUNDS" -eq 1 ] || name=$name.$round
			args=""
			for s in $SEEDS; do args="$args --seed $s"; done
			SONDA_SCOPE_FOLLOW=any SONDA_LOG_LEVEL=warn measure "$name" "${bin#*=}" crawl --data "$OUT/data-$name" \
				--allow-private --resolve "*.test=127.0.0.1:$PORT" --min-delay 0 --concurrency "$CONC" --index "$mode" \
				--profile "$OUT/$name.pprof" $args
			pages=$(sed -n 's/.*[^0-9]\([0-9][0-9]*\) pages fetched.*/\1/p' "$OUT/$name.out" | head -1)
			echo "load $(cut -d' ' -f1-3 /proc/loadavg)"
			report "$name" "${pages:-0}"
			grep -E 'pages/s|pages fetched' "$OUT/$name.out" | head -2 | sed 's/^/    /'
			sed -n '/^CPU profile/,$p' "$OUT/$name.err" | sed 's/^/    /'
			[ -n "${KEEP:-}" ] || rm -rf "$OUT/data-$name" # about 600 MB each; KEEP=1 keeps them
		done
	done
done
echo "outputs in $OUT"
