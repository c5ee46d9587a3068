#!/usr/bin/env bash
# every 5 s: each gateway JVM's threads' cumulative utime+stime (ticks) with their names (threads-PID.log), and every
# 10 s its turn producers' request and retry counters from /metrics/prometheus (metrics-PID.log)
OUT=$1; mkdir -p "$OUT"; n=0
while true; do
  t=$(date -u +%H:%M:%S)
  for p in $(pgrep -f "cli\.Main gateway"); do
    awk -v t=$t -v p=$p '{ s=$0; name=substr(s, index(s,"(")+1); name=substr(name,1,match(name,/\) [A-Z] /)-1); gsub(/ /,"_",name);
      rest=substr(s, match(s,/\) [A-Z] /)+2); split(rest,f," "); split(FILENAME,a,"/"); print t, p, a[5], name, f[12]+f[13] }' \
      /proc/$p/task/*/stat 2>/dev/null >> "$OUT/threads-$p.log"
    if (( n % 2 == 0 )); then
      port=$(tr '\0' ' ' < /proc/$p/cmdline | grep -oE -- "--management-port [0-9]+" | awk '{print $2}')
      curl -s --max-time 3 "http://127.0.0.1:$port/metrics/prometheus" | grep -E "^kafka_producer_(request_total|record_retry_total|record_send_total|produce_throttle|records_per_request_avg|batch_size_avg|request_latency_avg)\{" | sed "s/^/$t /" >> "$OUT/metrics-$p.log"
    fi
  done
  n=$((n+1)); sleep 5
done
