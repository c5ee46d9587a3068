#!/usr/bin/env bash
# ab.sh LABEL JAR: waits for the QUIET lock, runs run.sh in it, releases it at once
L=$1; JAR=$2
until ( set -o noclobber; echo "brokercpu $(date -u +%H:%M) (bench --cluster 3 quick A/B, <=12 min)" > /work/wt/QUIET ) 2>/dev/null; do sleep 15; done
/tmp/bcpu/run.sh $L $JAR
rm -f /work/wt/QUIET
echo "$L done $(date -u +%H:%M:%S)"
