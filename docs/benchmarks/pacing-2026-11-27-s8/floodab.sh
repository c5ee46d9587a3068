#!/usr/bin/env bash
# A/B of one bench phase between two jars, each run in its own QUIET window: floodab.sh NAME OUTDIR "bench args" jarA jarB [jarA jarB ...]
set -u
name=$1; out=$2; args=$3; shift 3
mkdir -p $out
i=0
for jar in "$@"; do
  i=$((i+1))
  until ( set -o noclobber; echo "lead-$name $(date +%H:%M)" > /work/wt/QUIET ) 2>/dev/null; do sleep 10; done
  for t in $(seq 1 24); do l=$(cut -d' ' -f1 /proc/loadavg); awk "BEGIN{exit !($l < 2.5)}" && break; sleep 10; done
  tag=$(basename $(dirname $(dirname $(dirname $jar))))
  echo "run$i $tag start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  java -jar $jar bench $args --output $out/run$i-$tag > $out/run$i-$tag.log 2>&1
  echo "run$i $tag rc=$? end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  rm -f /work/wt/QUIET
  sleep 20
done
echo done
