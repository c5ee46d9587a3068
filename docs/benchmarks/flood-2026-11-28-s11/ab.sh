#!/usr/bin/env bash
# ab.sh OUTDIR EVENTS jarA jarB ... : one QUIET window, runs the jars in the order given with the brief's flood
# command at EVENTS raw events; load and times logged. A run after the first is skipped when the window (from
# taking QUIET, the wait for a load under 2.5 included) would pass 6 minutes, the last run's time taken as the next's.
# (The first two windows, run1-run5, counted from the end of that wait: the second held QUIET 06:11:41-06:17:48.)
set -u
out=$1; events=$2; shift 2
mkdir -p $out
until ( set -o noclobber; echo "flood2 $(date -u +%H:%M) flood A/B" > /work/wt/QUIET ) 2>/dev/null; do sleep 10; done
trap 'rm -f /work/wt/QUIET' EXIT
window=$(date +%s)
for t in $(seq 1 12); do l=$(cut -d' ' -f1 /proc/loadavg); awk "BEGIN{exit !($l < 2.5)}" && break; sleep 10; done
for jar in "$@"; do
  now=$(date +%s)
  if [ -n "${last:-}" ] && [ $((now - window + last)) -gt 350 ]; then
    echo "skipped $(basename $jar .jar): the window would pass 6 minutes" | tee -a $out/window.log; continue
  fi
  tag=$(basename $jar .jar); n=$(ls $out | grep -c '^run.*log$'); run=run$((n+1))-$tag
  echo "$run start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.log
  java -jar $jar bench --only flood --pairs 3 --flood-events $events --flood-warmup-pairs 2 --output $out/$run > $out/$run.log 2>&1
  rc=$?; last=$(( $(date +%s) - now ))
  echo "$run rc=$rc end $(date -u +%H:%M:%S) (${last} s) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.log
done
