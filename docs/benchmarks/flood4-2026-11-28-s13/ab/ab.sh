#!/usr/bin/env bash
# ab.sh OUTDIR jarA jarB ... : one QUIET window (taken when free), runs the jars in the order given with the
# flood command of the brief (1,000,000 events, 3 pairs, 2 warm-up pairs); load and times logged. A run after the
# first is skipped when the window (from taking QUIET, the wait for a load under 2.5 included) would pass 6 minutes,
# the last run's time taken as the next's. (flood3's ab.sh of the twelfth session, with this helper's name.)
set -u
out=$1; shift
mkdir -p $out
until ( set -o noclobber; echo "flood4 $(date -u +%H:%M) flood A/B" > /work/wt/QUIET ) 2>/dev/null; do sleep 5; done
trap 'rm -f /work/wt/QUIET' EXIT
window=$(date +%s)
echo "window taken $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.log
for t in $(seq 1 9); do l=$(cut -d' ' -f1 /proc/loadavg); awk "BEGIN{exit !($l < 2.5)}" && break; sleep 10; done
for jar in "$@"; do
  now=$(date +%s)
  if [ -n "${last:-}" ] && [ $((now - window + last)) -gt 355 ]; then
    echo "skipped $(basename $jar .jar): the window would pass 6 minutes" | tee -a $out/window.log; continue
  fi
  tag=$(basename $jar .jar); n=$(ls $out | grep -c '^run.*log$'); run=run$((n+1))-$tag
  echo "$run start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.log
  java -jar $jar bench --only flood --pairs 3 --flood-events 1000000 --flood-warmup-pairs 2 --output $out/$run > $out/$run.log 2>&1
  rc=$?; last=$(( $(date +%s) - now ))
  echo "$run rc=$rc end $(date -u +%H:%M:%S) (${last} s) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.log
done
echo "window released $(date -u +%H:%M:%S)" | tee -a $out/window.log
