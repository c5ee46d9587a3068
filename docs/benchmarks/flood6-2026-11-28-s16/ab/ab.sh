#!/usr/bin/env bash
# ab.sh OUTDIR jarA jarB ... : one QUIET window, runs the jars in the order given with flood5's flood command and
# 4 warm-up pairs instead of 2 (1,000,000 events, 3 measured pairs); load and times logged. The lock is tried every
# 15 s. At most 30 s wait for a 1-minute load under 2.5 (the bench's own settle check follows). A run after the first
# is skipped when the window (from taking QUIET, that wait included) would pass 6 minutes, the last run's time taken
# as the next's. (flood5's ab.sh of the fifteenth session with this helper's name, 4 warm-up pairs, a 15 s retry.)
set -u
out=$1; shift
mkdir -p $out
until ( set -o noclobber; echo "flood6 $(date -u +%H:%M) flood A/B 4.3.1/4.4.0 (<= 6 min)" > /work/wt/QUIET ) 2>/dev/null; do
  echo "QUIET held $(date -u +%H:%M:%S): $(cat /work/wt/QUIET 2>/dev/null)" >> $out/wait.log
  [ $(date -u +%H%M) -ge 2138 ] && { echo "no window taken: past 21:38" | tee -a $out/window.log; exit 0; }; sleep 15; done
trap 'grep -q "^flood6 " /work/wt/QUIET 2>/dev/null && rm -f /work/wt/QUIET' EXIT
window=$(date +%s)
echo "window taken $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.log
for t in $(seq 1 3); do l=$(cut -d' ' -f1 /proc/loadavg); awk "BEGIN{exit !($l < 2.5)}" && break; sleep 10; done
for jar in "$@"; do
  now=$(date +%s)
  if [ -n "${last:-}" ] && [ $((now - window + last)) -gt 355 ]; then
    echo "skipped $(basename $jar .jar): the window would pass 6 minutes" | tee -a $out/window.log; continue
  fi
  tag=$(basename $jar .jar); n=$(ls $out | grep -c '^run.*log$'); run=run$((n+1))-$tag
  echo "$run start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.log
  java -jar $jar bench --only flood --pairs 3 --flood-events 1000000 --flood-warmup-pairs 4 --output $out/$run > $out/$run.log 2>&1
  rc=$?; last=$(( $(date +%s) - now ))
  echo "$run rc=$rc end $(date -u +%H:%M:%S) (${last} s) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.log
done
grep -q '^flood6 ' /work/wt/QUIET && rm -f /work/wt/QUIET
echo "window released $(date -u +%H:%M:%S)" | tee -a $out/window.log
