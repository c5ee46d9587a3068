#!/usr/bin/env bash
# windows of two runs; the jar with fewer runs so far goes first (ties: the one that did not run last), so runs
# alternate A, B, A, B across windows; a 75 s gap after each window so the other measuring helper can take QUIET
A=/tmp/j/flood5/k440-170104b.jar; B=/tmp/j/flood5/k431-170104b.jar
out=/tmp/j/flood5/ab
while :; do
  [ $(date -u +%H%M) -ge 1829 ] && { echo "no further window: past 18:29" >> $out/window.log; break; }
  na=$(ls -d $out/run*-k440-* 2>/dev/null | grep -vc '\.log$'); nb=$(ls -d $out/run*-k431-* 2>/dev/null | grep -vc '\.log$')
  lastrun=$(ls -d $out/run*/ 2>/dev/null | sed 's#.*/run\([0-9]*\)-\(.*\)/#\1 \2#' | sort -n | tail -1 | cut -d' ' -f2)
  if [ $na -lt $nb ] || { [ $na = $nb ] && [[ $lastrun == k431* ]]; }; then /tmp/j/flood5/ab.sh $out $A $B; else /tmp/j/flood5/ab.sh $out $B $A; fi
  sleep 75
done
echo "driver done $(date -u +%H:%M:%S)" >> $out/window.log
