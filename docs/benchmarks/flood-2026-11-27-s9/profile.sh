#!/usr/bin/env bash
# profile.sh JAR NAME : one JFR-profiled flood run (caller holds QUIET)
set -u
jar=$1; name=$2; out=/tmp/flood/prof-$name
mkdir -p $out
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee $out/window.txt
java -XX:FlightRecorderOptions:stackdepth=256 -XX:StartFlightRecording=filename=$out/run.jfr,settings=profile,method-profiling=max \
  -jar $jar bench --only flood --pairs 2 --flood-events 300000 --flood-warmup-pairs 2 --output $out/bench > $out/bench.log 2>&1
echo "rc=$? end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.txt
