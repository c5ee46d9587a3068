#!/usr/bin/env bash
# One quiet window: runs the given sides (before|after) in order, each a flood bench, logs load before/after.
set -u
name=deltaread; tag=$1; shift
out=/tmp/deltaread-ab; mkdir -p $out
until ( set -o noclobber; echo "$name $(date +%H:%M)" > /work/wt/QUIET ) 2>/dev/null; do
  while [ -f /work/wt/QUIET ]; do sleep 30; done
done
trap 'rm -f /work/wt/QUIET' EXIT
start=$(date +%s)
echo "window $tag taken $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
while awk '{exit !($1 >= 2.5)}' /proc/loadavg && [ $(( $(date +%s) - start )) -lt 240 ]; do sleep 10; done
i=0; for side in "$@"; do i=$((i+1))
  jar=/tmp/deltaread-$side.jar
  echo "$tag $side start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
  timeout 200 java -jar $jar bench --only flood --pairs 3 --flood-events 300000 --flood-warmup-pairs 2 \
    --output $out/$tag-$i-$side > $out/$tag-$i-$side.log 2>&1
  rc=$?; echo "$tag $side end $(date -u +%H:%M:%S) rc=$rc load $(cut -d' ' -f1-3 /proc/loadavg)"
done
rm -f /work/wt/QUIET
echo "window $tag released $(date -u +%H:%M:%S) held $(( $(date +%s) - start )) s"
