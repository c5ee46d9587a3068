#!/usr/bin/env bash
# profile.sh OUTDIR JAR... : one QUIET window, a JFR-profiled flood run of each jar in the order given
# ("Profiling a run" in docs/benchmarks.md; 1,000,000 events, 2 pairs after 2 warm-up pairs); load and times logged
set -u
out=$1; shift
mkdir -p $out
until ( set -o noclobber; echo "flood4 $(date -u +%H:%M) flood profile" > /work/wt/QUIET ) 2>/dev/null; do sleep 10; done
trap 'rm -f /work/wt/QUIET' EXIT
echo "window taken $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.txt
for t in $(seq 1 9); do l=$(cut -d' ' -f1 /proc/loadavg); awk "BEGIN{exit !($l < 2.5)}" && break; sleep 10; done
for jar in "$@"; do
  name=$(basename $jar .jar)
  echo "$name start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.txt
  java -XX:FlightRecorderOptions:stackdepth=256 -XX:StartFlightRecording=filename=$out/$name.jfr,settings=profile,method-profiling=max \
    -jar $jar bench --only flood --pairs 2 --flood-events 1000000 --flood-warmup-pairs 2 --output $out/$name-bench > $out/$name-bench.log 2>&1
  echo "$name rc=$? end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.txt
done
echo "window released $(date -u +%H:%M:%S)" | tee -a $out/window.txt
