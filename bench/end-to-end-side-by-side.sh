#!/usr/bin/env bash
# The latency from send to a consumer's poll, side by side in one run: Kafka 4.4 (3 brokers, KRaft) and Tidemark
# (`tidemark local up`, 3 nodes), the same steps: a topic of PARTS (default 6) partitions, RF 3; WARM (300,000)
# records of 1 KiB produced as fast as possible (as side-by-side.sh's max run, so both meet the fixed run warm); then
# a producer at RATE (4,000) records/s with linger.ms 0 for DURATION (30) seconds and a long-polling consumer of every
# partition in the same process: `tidemark perf end-to-end` and its Kafka twin bench/kafka/KafkaEndToEnd.java, which
# measure the same way (latency = the clock at the poll that returned a record minus its send time; the first 5 s
# left out). After each end-to-end run: the CPU seconds its three brokers used during it (/proc/PID/stat) and the
# client process's (producer and consumer together, /usr/bin/time's user + system).
# Usage, from the project checkout: [PARTS=N] [RATE=N] [DURATION=N] [WARM=N] bench/end-to-end-side-by-side.sh [ROUNDS]
# Uses the Kafka harness of ../shared/bench/kafka (bench/kafka-harness.sh).
set -uo pipefail
PROJ=$(cd "$(dirname "$0")/.." && pwd); ROUNDS=${1:-2}; PARTS=${PARTS:-6}; RATE=${RATE:-4000}; DURATION=${DURATION:-30}
WARM=${WARM:-300000}
. "$PROJ/bench/kafka-harness.sh"
W=$(mktemp -d)
. "$PROJ/bench/proc-cpu.sh"
cpu_line() {   # WHO BROKERS_CPU_BEFORE BROKERS_CPU_AFTER CLIENT_TIME_FILE
  awk -v who="$1" -v a="$2" -v b="$3" -v c="$(awk '{print $1 + $2}' "$4" 2>/dev/null)" \
    'BEGIN {printf "%s end-to-end cpu: brokers %.2f s, client %.2f s\n", who, b - a, c}'
}
kafka_round() {
  "$K/run-cluster.sh" 3 19092 "$W/k" >/dev/null 2>&1 || { echo "kafka did not start"; return; }
  local B=127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094
  timeout 600 $J org.apache.kafka.tools.TopicCommand --bootstrap-server $B --create --topic e$PARTS --partitions $PARTS \
    --replication-factor 3 >/dev/null
  echo "kafka warm-up: $(timeout 600 $J org.apache.kafka.tools.ProducerPerformance --topic e$PARTS --num-records $WARM --record-size 1024 --throughput -1 --producer-props bootstrap.servers=$B acks=all 2>/dev/null | tail -1)"
  local pids c0; pids=$(cat "$W/k/pids" 2>/dev/null); c0=$(cpu_s $pids)
  echo "kafka $(timeout 600 /usr/bin/time -f '%U %S' -o "$W/kafka-client.time" $J "$PROJ/bench/kafka/KafkaEndToEnd.java" $B e$PARTS $RATE $DURATION 1024 5 0 2>&1 | grep -E '^end-to-end|^acknowledged|^error' | tr '\n' ' ')"
  cpu_line kafka "$c0" "$(cpu_s $pids)" "$W/kafka-client.time"
  "$K/stop-cluster.sh" "$W/k" >/dev/null 2>&1; rm -rf "$W/k"
}
tidemark_round() {
  (cd "$PROJ" && . bench/tidemark-cluster.sh && cluster_up e2e 29092 "$W/t" e$PARTS $PARTS \
    || { echo "tidemark did not start"; exit 1; }
    echo "tidemark leaders: $LED/$PARTS"
    echo "tidemark warm-up: $(timeout 600 ./tidemark perf produce --bootstrap "$B" --topic e$PARTS --records $WARM --record-size 1024 --throughput -1 2>&1 | tail -1)"
    pids=$(awk 1 "$W"/t/e2e/node-*/broker.pid 2>/dev/null); c0=$(cpu_s $pids)   # awk: the pid files end without a newline
    echo "tidemark $(timeout 600 /usr/bin/time -f '%U %S' -o "$W/tidemark-client.time" ./tidemark perf end-to-end --bootstrap "$B" --topic e$PARTS --rate $RATE --duration ${DURATION}s --record-size 1024 2>&1 | grep -E '^end-to-end|^acknowledged|^error' | tr '\n' ' ')"
    cpu_line tidemark "$c0" "$(cpu_s $pids)" "$W/tidemark-client.time")
  (cd "$PROJ" && timeout 120 ./tidemark local down --name e2e --data-dir "$W/t" >/dev/null 2>&1)
  rm -rf "$W/t"
}
echo "# $(date -u) nproc=$(nproc) project=$(git -C "$PROJ" rev-parse --short HEAD) partitions=$PARTS rate=$RATE seconds=$DURATION"
for r in $(seq 1 "$ROUNDS"); do
  echo "--- round $r loadavg $(cut -d' ' -f1-3 /proc/loadavg)"; kafka_round; tidemark_round
done
rm -rf "$W"
