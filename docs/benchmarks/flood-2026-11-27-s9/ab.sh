#!/usr/bin/env bash
# ab.sh OUTDIR jarA jarB : one QUIET window, runs A then B (the brief's flood command), load and times logged
set -u
out=$1; shift
mkdir -p $out
until ( set -o noclobber; echo "flood $(date -u +%H:%M) A/B" > /work/wt/QUIET ) 2>/dev/null; do sleep 10; done
for t in $(seq 1 12); do l=$(cut -d' ' -f1 /proc/loadavg); awk "BEGIN{exit !($l < 2.5)}" && break; sleep 10; done
for jar in "$@"; do
  tag=$(basename $jar .jar); n=$(ls $out | grep -c '^run.*log$'); run=run$((n+1))-$tag
  echo "$run start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.log
  java -jar $jar bench --only flood --pairs 3 --flood-events 300000 --flood-warmup-pairs 2 --output $out/$run > $out/$run.log 2>&1
  echo "$run rc=$? end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a $out/window.log
done
rm -f /work/wt/QUIET
