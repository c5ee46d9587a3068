#!/usr/bin/env bash
# every 5 s: cumulative utime+stime (clock ticks, 100/s) of each java process, with its role
while true; do
  t=$(date -u +%H:%M:%S)
  for p in $(pgrep java); do
    cmd=$(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null)
    role=$(grep -oE "cli\.Main [a-z-]+( --node-id [0-9]+)?" <<<"$cmd" | sed 's/cli\.Main //; s/ --node-id /-/')
    [[ -z "$role" ]] && role=$(grep -qE "\.jar bench" <<<"$cmd" && echo bench-driver || echo other)
    s=$(awk '{print $14+$15}' /proc/$p/stat 2>/dev/null)
    [[ -n "$s" ]] && echo "$t $p $role $s"
  done
  sleep 5
done
