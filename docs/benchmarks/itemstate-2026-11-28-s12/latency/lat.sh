#!/usr/bin/env bash
set -u
out=/tmp/j/flood3/lat; mkdir -p $out
( set -o noclobber; echo "flood3 $(date -u +%H:%M) latency A/B" > /work/wt/QUIET ) 2>/dev/null || { echo "QUIET taken"; exit 1; }
trap 'rm -f /work/wt/QUIET' EXIT
echo "window taken $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.log
for jar in /tmp/j/flood3/main-d9f68c7.jar /tmp/j/flood3/outbox-de27e78.jar; do
  tag=$(basename $jar .jar)
  echo "$tag start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.log
  timeout 170 java -jar $jar bench --only appends --pairs 3 --output $out/$tag > $out/$tag.log 2>&1
  echo "$tag rc=$? end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.log
done
echo "window released $(date -u +%H:%M:%S)" | tee -a $out/window.log
