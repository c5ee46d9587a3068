#!/usr/bin/env bash
# Two full benchmark runs back to back, the second compared with the first (--compare), for
# docs/benchmarks.md: the results go to docs/benchmarks/pairs-<DATE>/run1 and run2; the runs' conditions
# and headline table are written to docs/benchmarks/pairs-<DATE>/section.md, printed, and put into
# docs/benchmarks.md between its "two-runs.sh: begin" and "end" markers (the prose verdict is yours to write).
#
#   turnstream-dist/src/bench/two-runs.sh [DATE] [-- more bench options, e.g. --quick]
#
# DATE defaults to today (UTC). Run it from a clean checkout on a quiet machine: the table is only as
# good as the machine was quiet, and the load averages it records say how quiet that was.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
date="$(date -u +%Y-%m-%d)"
if [[ $# -gt 0 && "$1" != "--" ]]; then
  date="$1"
  shift
fi
[[ "${1:-}" == "--" ]] && shift
dir="docs/benchmarks/pairs-$date"
cd "$root"
if [[ -e "$dir" ]]; then
  echo "$dir exists already: move it away or pass another DATE" >&2
  exit 1
fi
mkdir -p "$dir"
commit="$(git rev-parse --short HEAD)"

run() { # name, bench options...
  local name="$1"
  shift
  local from
  from="$(date -u +%H:%M)"
  ./turnstream bench --output "$dir/$name" "$@" | tee "$dir/$name.log"
  echo "$from-$(date -u +%H:%M) UTC" >"$dir/$name.when"
}

# Before run 2: run 1's last phase (isolation) leaves the 1-minute load average near 12-16 although the CPUs are idle
# the second after it exits (a moving average, one-minute time constant). bench itself waits before every measured
# run until the CPUs are idle (--settle-wait); this wait only lets run 2's recorded load before start as run 1's did:
# under one per core, at most 5 minutes.
settle_load() {
  local cores limit=300 waited=0
  cores="$(nproc)"
  while awk -v c="$cores" '{ exit !($1 >= c) }' /proc/loadavg && ((waited < limit)); do
    ((waited % 30 == 0)) && echo "two-runs.sh: 1-minute load average $(cut -d' ' -f1 /proc/loadavg), waiting until it is under $cores (${waited} s of at most ${limit} s)"
    sleep 5
    waited=$((waited + 5))
  done
  echo "two-runs.sh: load average $(cut -d' ' -f1-3 /proc/loadavg) after ${waited} s; run 2 begins"
}

run run1 "$@"
settle_load
run run2 --compare "$dir/run1/results.json" "$@"

# one line per run: when, how long, and the load averages (1 / 5 / 15 min) before and after
conditions() { # name
  local json="$dir/$1/results.json"
  jq -r --arg when "$(cat "$dir/$1.when")" --arg name "$1" '
    def load(l): [l.one, l.five, l.fifteen] | map(if . == null then "-" else (. * 10 | round / 10 | tostring) end) | join(" / ");
    def settling: (.settling // []) as $w | "\($w | map(.waitedSeconds) | add // 0 | round) s waiting for the machine to settle before \($w | length) measured runs, \($w | map(select(.settled == false)) | length) begun unsettled";
    "- \($name): \($when), \(.durationSeconds | round) s; load average \(load(.loadBefore)) before, \(load(.loadAfter)) after; \(settling); \(.warnings | map(select(startswith("too noisy"))) | length) \"too noisy to judge\" warnings"' "$json"
}

{
  echo "Runs of $date. Raw results, every run's value, and the comparison: [\`benchmarks/pairs-$date/\`](benchmarks/pairs-$date/)"
  echo "([run 1](benchmarks/pairs-$date/run1/results.md), [run 2](benchmarks/pairs-$date/run2/results.md),"
  echo "[comparison](benchmarks/pairs-$date/run2/comparison.md))."
  echo
  echo "Commands, run one after the other on \`$commit\` (\`turnstream-dist/src/bench/two-runs.sh\`):"
  echo
  echo '```sh'
  echo "./turnstream bench --output $dir/run1${*:+ $*}"
  echo "./turnstream bench --output $dir/run2 --compare $dir/run1/results.json${*:+ $*}"
  echo '```'
  echo
  conditions run1
  conditions run2
  echo
  # the comparison's table, its columns named for the two runs
  sed -n '/^| figure /,/^$/p' "$dir/run2/comparison.md" \
    | sed -e '1s/base: median/run 1 median/' -e '1s/now: median/run 2 median/' -e '1s/| verdict |/| the two runs |/'
  grep -E '^[0-9]+ of [0-9]+ figures changed' "$dir/run2/comparison.md"
} >"$dir/section.md"
rm -f "$dir"/run*.when
docs=docs/benchmarks.md
awk -v section="$dir/section.md" '
  /<!-- two-runs.sh: begin -->/ { print; while ((getline line < section) > 0) print line; skip = 1; next }
  /<!-- two-runs.sh: end -->/ { skip = 0 }
  !skip { print }' "$docs" >"$docs.new"
mv "$docs.new" "$docs"
cat "$dir/section.md"
echo
echo "Written: $dir/section.md, and into $docs between the two-runs.sh markers: review with git diff, then"
echo "write below the table whether the two runs agreed within their spread."
