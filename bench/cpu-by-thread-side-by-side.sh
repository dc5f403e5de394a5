#!/usr/bin/env bash
# Where the brokers' CPU goes, side by side in one run: Kafka 4.4 (3 brokers, KRaft) and Tidemark (`tidemark local
# up`, 3 nodes), the side-by-side's steps (a topic of PARTS (default 6) partitions, RF 3; 300,000 records of 1 KiB as
# fast as possible, then 4,000 records/s with linger.ms 0 for SECONDS (default 60)); prints each side's fixed-run
# summary and its three brokers' CPU per 1,000 records of the fixed run by thread pool (user + system clock ticks of
# every thread, /proc/PID/task/TID/stat, each thread named from a thread dump with its numbers left out).
# Usage, from the project checkout: [PARTS=N] bench/cpu-by-thread-side-by-side.sh [ROUNDS] [SECONDS]
# Uses the Kafka harness of ../shared/bench/kafka (bench/kafka-harness.sh).
set -uo pipefail
PROJ=$(cd "$(dirname "$0")/.." && pwd); ROUNDS=${1:-2}; SECONDS_AT_RATE=${2:-60}; PARTS=${PARTS:-6}
. "$PROJ/bench/kafka-harness.sh"
. "$PROJ/bench/thread-pools.sh"
W=$(mktemp -d)
fixed_cpu() {   # WHO NAMES BEFORE AFTER: the brokers' CPU ms per 1,000 fixed-run records by pool
  by_pool "$2" "$3" "$4" "$(awk -v n=$((SECONDS_AT_RATE * 4)) -v hz="$(getconf CLK_TCK)" 'BEGIN {print 1000 / hz / n}')" \
    "%8.1f" | sed "s/^ /$1/"
}
kafka_round() {
  "$K/run-cluster.sh" 3 19092 "$W/k" >/dev/null 2>&1 || { echo "kafka did not start"; return; }
  local B=127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094 pids
  timeout 600 $J org.apache.kafka.tools.TopicCommand --bootstrap-server $B --create --topic c$PARTS --partitions $PARTS \
    --replication-factor 3 >/dev/null
  pids=$(cat "$W/k/pids")
  echo "kafka max:   $(timeout 600 $J org.apache.kafka.tools.ProducerPerformance --topic c$PARTS --num-records 300000 --record-size 1024 --throughput -1 --producer-props bootstrap.servers=$B acks=all | tail -1)"
  thread_ticks $pids >"$W/k0"
  echo "kafka fixed: $(timeout 600 $J org.apache.kafka.tools.ProducerPerformance --topic c$PARTS --num-records $((SECONDS_AT_RATE * 4000)) --record-size 1024 --throughput 4000 --producer-props bootstrap.servers=$B acks=all linger.ms=0 | tail -1)"
  thread_ticks $pids >"$W/k1"; thread_pools $pids >"$W/kn"; fixed_cpu kafka "$W/kn" "$W/k0" "$W/k1"
  "$K/stop-cluster.sh" "$W/k" >/dev/null 2>&1; rm -rf "$W/k"
}
tidemark_round() {
  (cd "$PROJ" && . bench/tidemark-cluster.sh && cluster_up cpu 29092 "$W/t" c$PARTS $PARTS \
    || { echo "tidemark did not start"; exit 1; }
    pids=$(awk 1 "$W"/t/cpu/node-*/broker.pid)   # awk: the pid files end without a newline
    echo "tidemark max:   $(timeout 600 ./tidemark perf produce --bootstrap "$B" --topic c$PARTS --records 300000 --record-size 1024 --throughput -1 2>&1 | tail -1)"
    thread_ticks $pids >"$W/t0"
    echo "tidemark fixed: $(timeout 600 ./tidemark perf produce --bootstrap "$B" --topic c$PARTS --records $((SECONDS_AT_RATE * 4000)) --record-size 1024 --throughput 4000 --linger-ms 0 2>&1 | tail -1)"
    thread_ticks $pids >"$W/t1"; thread_pools $pids >"$W/tn"; fixed_cpu tidemark "$W/tn" "$W/t0" "$W/t1")
  (cd "$PROJ" && timeout 120 ./tidemark local down --name cpu --data-dir "$W/t" >/dev/null 2>&1)
  rm -rf "$W/t"
}
echo "# $(date -u) nproc=$(nproc) project=$(git -C "$PROJ" rev-parse --short HEAD) partitions=$PARTS seconds=$SECONDS_AT_RATE"
for r in $(seq 1 "$ROUNDS"); do
  echo "--- round $r loadavg $(cut -d' ' -f1-3 /proc/loadavg)"; kafka_round; tidemark_round
done
rm -rf "$W"
