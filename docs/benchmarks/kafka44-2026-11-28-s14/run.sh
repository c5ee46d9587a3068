#!/bin/bash
# usage: run.sh LABEL JAR [extra bench args...]; takes QUIET, runs, releases
label=$1; jar=$2; shift 2
out=/tmp/kafka44/runs/$label
( set -o noclobber; echo "kafka44 $(date -u +%H:%M) (bench --cluster 3 quick, <=12 min)" > /work/wt/QUIET ) || { echo "QUIET busy: $(cat /work/wt/QUIET)"; exit 3; }
trap 'rm -f /work/wt/QUIET' EXIT
mkdir -p $out
echo "$label start $(date -u +%H:%M:%S) load $(cat /proc/loadavg) jar $jar args $*" >> /tmp/kafka44/measure.log
java -jar $jar "$@" --output $out > $out/bench-output.txt 2>&1; rc=$?
echo "$label end $(date -u +%H:%M:%S) load $(cat /proc/loadavg) rc=$rc" >> /tmp/kafka44/measure.log
rm -f /work/wt/QUIET
