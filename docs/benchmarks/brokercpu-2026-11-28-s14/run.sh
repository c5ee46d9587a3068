#!/usr/bin/env bash
# usage: run.sh LABEL JAR [jfr] ; runs a quick cluster bench with the CPU sampler and the broker request poller
set -u
L=$1; JAR=$2; MODE=${3:-}
D=/tmp/bcpu/$L; mkdir -p $D
echo "start $(date -u +%H:%M:%S) load $(cat /proc/loadavg)" > $D/window.txt
/tmp/cpusample.sh > $D/cpu.txt 2>/dev/null & S=$!
java -cp /tmp/bcpu ReqRates 15 > $D/requests.txt 2> $D/requests.err & R=$!
if [[ "$MODE" == jfr ]]; then
  mkdir -p $D/jfr/repo
  export JAVA_TOOL_OPTIONS="-XX:StartFlightRecording=filename=$D/jfr/,dumponexit=true -XX:FlightRecorderOptions=repository=$D/jfr/repo"
fi
cd /work/wt/brokercpu && java -jar $JAR bench --cluster 3 --quick --turns 200 --fault-runs 2 --output $D/out > $D/bench.log 2>&1
unset JAVA_TOOL_OPTIONS
kill $S $R
echo "end $(date -u +%H:%M:%S) load $(cat /proc/loadavg)" >> $D/window.txt
