#!/usr/bin/env bash
# The brokers' JVM options (a garbage collector, a heap) over a long fixed-rate run: a fresh 3-broker
# `tidemark local up` cluster started with the given options, 300,000 records as fast as possible, then 4,000
# records/s (linger.ms 0) for SECONDS; prints both summaries, the brokers' CPU during the fixed run, their threads'
# context switches during it per 1,000 records by thread pool (a thread's wake-ups: /proc/PID/task/TID/status, named
# from a thread dump) and their CPU by thread pool (/proc/PID/task/TID/stat), the leaderships they lost and the
# elections their Raft groups started during the load (Ratis' electionCount, from each broker's /metrics), and their
# collector's pauses (a GC log each).
# Usage: bench/gc-long-run.sh LABEL "JVM OPTIONS" [SECONDS]   (default 600 s; 6 partitions, 1 KiB records, RF 3)
#   e.g. bench/gc-long-run.sh g1 "-XX:+UseG1GC"; bench/gc-long-run.sh zgc "-XX:+UseZGC -Xms2g -Xmx2g"
# Env: BASE_PORT (default 29800), PARTS (default 6), OUT (where the GC logs and broker logs are kept; default a new
# temporary directory).
set -uo pipefail
LABEL=${1:?label}; OPTS=${2:-}; SECONDS_AT_RATE=${3:-600}; PARTS=${PARTS:-6}
cd "$(dirname "$0")/.."
BASE=${BASE_PORT:-29800}; OUT=${OUT:-$(mktemp -d)}; DATA=$(mktemp -d); NAME=gc
mkdir -p "$OUT"
stop() { timeout 120 ./tidemark local down --name $NAME --data-dir "$DATA" >/dev/null 2>&1; rm -rf "$DATA"; }
trap stop EXIT
. bench/proc-cpu.sh
ratis_sum() {   # a counter of Ratis' summed over the brokers' groups, from /metrics: ratis_*_<group>_$1
  local port total=0 n
  for port in $((BASE + 1)) $((BASE + 11)) $((BASE + 21)); do
    n=$( (exec 3<>/dev/tcp/127.0.0.1/$port && printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3 && cat <&3) 2>/dev/null \
      | awk -v m="$1" '$1 ~ "^ratis_.*_" m "$" {s += $2} END {printf "%d", s}')
    total=$((total + ${n:-0}))
  done
  echo $total
}
elections() { ratis_sum electionCount_total; }   # the elections the brokers' Raft groups started so far
raft_counts() { echo "$(ratis_sum appendEntryCount_total) $(ratis_sum metadataLogEntryCount_total) $(ratis_sum flushCount_total)"; }
lost() { cat "$DATA"/$NAME/node-*/broker.log | grep -cE 'changes role from +LEADER to'; }
perf() { timeout $((SECONDS_AT_RATE + 300)) ./tidemark perf produce --bootstrap "$B" --topic p --record-size 1024 "$@" \
  >>"$OUT/perf-$LABEL.txt" 2>&1; tail -1 "$OUT/perf-$LABEL.txt"; }
echo "# $(date -u) nproc=$(nproc) loadavg $(cut -d' ' -f1-3 /proc/loadavg) project=$(git rev-parse --short HEAD) $LABEL: $OPTS"
# ZGC logs its pauses with the phases; G1 on the gc line
export TIDEMARK_BROKER_JAVA_OPTS="$OPTS -Xlog:gc,gc+phases=info:file=$OUT/gc-$LABEL-%p.log"
. bench/tidemark-cluster.sh
. bench/thread-pools.sh
cluster_up $NAME "$BASE" "$DATA" p "$PARTS" || exit 1
pids=$(awk 1 "$DATA"/$NAME/node-*/broker.pid)   # awk: the pid files end without a newline
lost0=$(lost); elections0=$(elections)
echo "$LABEL max:   $(perf --records 300000 --throughput -1)"
c0=$(cpu_s $pids); r0=$(raft_counts); thread_switches $pids >"$OUT/switches0-$LABEL.txt"; thread_ticks $pids >"$OUT/ticks0-$LABEL.txt"
echo "$LABEL fixed: $(perf --records $((SECONDS_AT_RATE * 4000)) --throughput 4000 --linger-ms 0)"
c1=$(cpu_s $pids); r1=$(raft_counts); thread_switches $pids >"$OUT/switches1-$LABEL.txt"; thread_ticks $pids >"$OUT/ticks1-$LABEL.txt"
thread_pools $pids >"$OUT/names-$LABEL.txt"
n=$((SECONDS_AT_RATE * 4))
awk -v a="$c0" -v b="$c1" -v n=$n -v l="$LABEL" \
  'BEGIN {printf "%s brokers cpu in the fixed run: %.1f s (%.1f ms per 1,000 records)\n", l, b - a, (b - a) * 1000 / n}'
echo "$r0 $r1" | awk -v n=$n -v l="$LABEL" '{printf "%s Raft log entries written per 1,000 records in the fixed run (3 brokers): %.1f, of them commit-index entries %.1f; log flushes %.1f\n", l, ($4 - $1) / n, ($5 - $2) / n, ($6 - $3) / n}'
echo "$LABEL context switches per 1,000 records in the fixed run, by thread pool (3 brokers; the top 12):"
by_pool "$OUT/names-$LABEL.txt" "$OUT/switches0-$LABEL.txt" "$OUT/switches1-$LABEL.txt" "$(awk -v n=$n 'BEGIN {print 1 / n}')" "%8.0f"
echo "$LABEL CPU per 1,000 records in the fixed run, by thread pool (3 brokers, ms; the top 12):"
by_pool "$OUT/names-$LABEL.txt" "$OUT/ticks0-$LABEL.txt" "$OUT/ticks1-$LABEL.txt" \
  "$(awk -v n=$n -v hz="$(getconf CLK_TCK)" 'BEGIN {print 1000 / hz / n}')" "%8.1f"
echo "$LABEL leaderships lost during the load: $(( $(lost) - lost0 )); elections started: $(( $(elections) - elections0 ))"
for n in 1 2 3; do cp "$DATA"/$NAME/node-$n/broker.log "$OUT/broker-$LABEL-$n.log"; done
cat "$OUT"/gc-"$LABEL"-*.log | grep -oE 'Pause .* [0-9.]+ms$' | grep -oE '[0-9.]+ms$' | tr -d ms | sort -n | awk -v l="$LABEL" '
  {v[NR] = $1; t += $1; if ($1 > 50) o50++; if ($1 > 200) o200++}
  END {printf "%s gc pauses: %d, %.1f s in all, over 50 ms: %d, over 200 ms: %d, p50 %.2f ms, max %.2f ms\n",
       l, NR, t / 1000, o50, o200, v[int((NR + 1) / 2)], v[NR]}'
echo "$LABEL allocation stalls: $(cat "$OUT"/gc-"$LABEL"-*.log | grep -c 'Allocation Stall'); logs in $OUT"
