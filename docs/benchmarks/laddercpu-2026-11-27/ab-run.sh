#!/bin/bash
# usage: ab-run.sh JARNAME OUTDIR  -- one A/B run in its own QUIET window
jar=$1; out=$2
until ( set -o noclobber; echo "laddercpu $(date +%H:%M)" > /work/wt/QUIET ) 2>/dev/null; do
  while [ -f /work/wt/QUIET ]; do sleep 30; done
done
for i in $(seq 1 16); do
  l=$(cut -d' ' -f1 /proc/loadavg); awk -v l=$l 'BEGIN{exit !(l<2.5)}' && break; sleep 15
done
echo "before $(date -u +%H:%M:%S) $(cat /proc/loadavg)" > $out.load
rm -rf $out
java -jar /tmp/lcpu/$jar.jar bench --only ladder --ladder 1000 --pairs 2 --largest-step-pairs 2 --output $out > $out.log 2>&1
echo "after $(date -u +%H:%M:%S) $(cat /proc/loadavg)" >> $out.load
rm -f /work/wt/QUIET
sleep 45  # leave the window free a moment for others waiting to measure
