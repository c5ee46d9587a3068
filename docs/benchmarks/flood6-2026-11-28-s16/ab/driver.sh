#!/usr/bin/env bash
# windows of two runs; the jar with fewer runs so far goes first (ties: the one that ran last, A when none has), so runs
# go A, B, B, A, A, B across windows; a 30 s gap after each window so the other helpers can build between windows;
# no window begins after 21:37 UTC. (flood5's driver.sh with this helper's jars and times.)
A=/tmp/j/flood6/k440-e5b9ca0.jar; B=/tmp/j/flood6/k431-e5b9ca0.jar
out=/tmp/j/flood6/ab
while :; do
  [ $(date -u +%H%M) -ge 2137 ] && { echo "no further window: past 21:37" >> $out/window.log; break; }
  na=$(ls -d $out/run*-k440-* 2>/dev/null | grep -vc '\.log$'); nb=$(ls -d $out/run*-k431-* 2>/dev/null | grep -vc '\.log$')
  lastrun=$(ls -d $out/run*/ 2>/dev/null | sed 's#.*/run\([0-9]*\)-\(.*\)/#\1 \2#' | sort -n | tail -1 | cut -d' ' -f2)
  if [ $na -lt $nb ] || { [ $na = $nb ] && [[ $lastrun != k431* ]]; }; then /tmp/j/flood6/ab.sh $out $A $B; else /tmp/j/flood6/ab.sh $out $B $A; fi
  sleep 30
done
echo "driver done $(date -u +%H:%M:%S)" >> $out/window.log
