#!/usr/bin/env bash
# one measured run: QUIET must be held; $1 label, $2 jar
set -u; R=/tmp/gwcpu/ab/$1; mkdir -p $R; cd $R
/tmp/cpusample.sh > $R/cpusample.log 2>&1 & cs=$!
/tmp/gwcpu/gwthreads.sh $R > $R/gwthreads.out 2>&1 & gt=$!
echo "start $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" > $R/when.txt
java -jar $2 bench --cluster 3 --quick --turns 200 --fault-runs 1 --output $R/out > $R/bench.log 2>&1; echo "rc $?" >> $R/when.txt
echo "end $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/when.txt
kill $cs $gt
