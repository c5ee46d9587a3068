#!/usr/bin/env bash
# lat.sh OUTDIR jarA jarB ... : one QUIET window (taken when free), `bench --only appends --pairs 3` of each jar in
# the order given (the first pair of each run a cold JVM); load and times logged; a run is skipped when the window
# would pass 6 minutes, the last run's time taken as the next's.
set -u
out=$1; shift
mkdir -p $out
until ( set -o noclobber; echo "flood4 $(date -u +%H:%M) latency A/B" > /work/wt/QUIET ) 2>/dev/null; do sleep 5; done
trap 'rm -f /work/wt/QUIET' EXIT
window=$(date +%s)
echo "window taken $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.log
for jar in "$@"; do
  now=$(date +%s)
  if [ -n "${last:-}" ] && [ $((now - window + last)) -gt 355 ]; then
    echo "skipped $(basename $jar .jar): the window would pass 6 minutes" | tee -a $out/window.log; continue
  fi
  tag=$(basename $jar .jar); n=$(ls $out | grep -c '^lat.*log$'); run=lat$((n+1))-$tag
  echo "$run start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.log
  timeout 170 java -jar $jar bench --only appends --pairs 3 --output $out/$run > $out/$run.log 2>&1
  rc=$?; last=$(( $(date +%s) - now ))
  echo "$run rc=$rc end $(date -u +%H:%M:%S) (${last} s) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.log
done
echo "window released $(date -u +%H:%M:%S)" | tee -a $out/window.log
