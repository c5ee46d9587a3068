#!/usr/bin/env bash
# For each gateway JVM (cli.Main gateway): start a JFR recording once (jcmd), dump it every 15 s to OUT/gw-PID.jfr
# (the killed one keeps its last dump), and record every 5 s each thread's cumulative utime+stime (ticks) with its name.
OUT=$1; JFR=${2:-on}; mkdir -p "$OUT"
declare -A started
while true; do
  t=$(date -u +%H:%M:%S)
  for p in $(pgrep -f "cli\.Main gateway"); do
    if [[ -z "${started[$p]}" && "$JFR" == on ]]; then
      jcmd $p JFR.start name=gw settings=profile filename="$OUT/gw-$p.jfr" >/dev/null 2>&1 && started[$p]=1
    fi
    for task in /proc/$p/task/*; do
      [[ -r $task/stat ]] || continue
      st=$(cat $task/stat 2>/dev/null) || continue
      name=${st#*(}; name=${name%)*}; rest=${st##*) }
      set -- $rest
      echo "$t $p ${task##*/} ${name// /_} $(( ${12} + ${13} ))"
    done >> "$OUT/threads-$p.log"
  done
  n=$((n+1))
  if (( n % 3 == 0 )) && [[ "$JFR" == on ]]; then
    for p in "${!started[@]}"; do [[ -d /proc/$p ]] && jcmd $p JFR.dump name=gw filename="$OUT/gw-$p.jfr" >/dev/null 2>&1; done
  fi
  sleep 5
done
