#!/usr/bin/env bash
# The lookup by time, side by side in one run: Kafka 4.4 (3 brokers, KRaft) and Tidemark (`tidemark local up`, 3
# nodes) up at once, each with a topic lo-1m of 1 partition, RF 3, filled with RECORDS (default 1,000,000) records of
# 100 B. Then per round, alternating the two: 10,000 lookups one call at a time, uniform over the partition's times,
# after WARMUPS (default "2000 40000") lookups in a fresh client JVM: Kafka's `Admin.listOffsets(forTimestamp)` (its
# producer's CreateTime, so compared with Tidemark's SendTime) through ../shared/bench's ListOffsetsBench, and
# `tidemark perf lookup` by ReceiveTime and by SendTime. A short warm-up measures the client's JIT as much as the call.
# Usage, from the project checkout: [RECORDS=N] [WARMUPS="N ..."] bench/lookup-side-by-side.sh [ROUNDS]
# Uses the Kafka harness of ../shared/bench/kafka (bench/kafka-harness.sh).
set -uo pipefail
PROJ=$(cd "$(dirname "$0")/.." && pwd); ROUNDS=${1:-2}; RECORDS=${RECORDS:-1000000}; WARMUPS=${WARMUPS:-2000 40000}
. "$PROJ/bench/kafka-harness.sh"
. "$PROJ/bench/tidemark-cluster.sh"
W=$(mktemp -d)
KB=127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094
stop_all() {
  "$K/stop-cluster.sh" "$W/k" >/dev/null 2>&1
  (cd "$PROJ" && timeout 120 ./tidemark local down --name lookup --data-dir "$W/t" >/dev/null 2>&1)
  rm -rf "$W"
}
trap stop_all EXIT
echo "# $(date -u) nproc=$(nproc) project=$(git -C "$PROJ" rev-parse --short HEAD) records=$RECORDS"
"$K/run-cluster.sh" 3 19092 "$W/k" >/dev/null 2>&1 || { echo "kafka did not start"; exit 1; }
timeout 120 $J org.apache.kafka.tools.TopicCommand --bootstrap-server $KB --create --topic lo-1m --partitions 1 \
  --replication-factor 3 >/dev/null || exit 1
echo "kafka produce: $(timeout 600 $J org.apache.kafka.tools.ProducerPerformance --topic lo-1m --num-records $RECORDS \
  --record-size 100 --throughput -1 --producer-props bootstrap.servers=$KB acks=all 2>/dev/null | tail -1)"
cd "$PROJ" || exit 1
cluster_up lookup 29092 "$W/t" lo-1m 1 || { echo "tidemark did not start"; exit 1; }
echo "tidemark produce: $(timeout 600 ./tidemark perf produce --bootstrap "$B" --topic lo-1m --records $RECORDS \
  --record-size 100 2>&1 | tail -1)"
for r in $(seq 1 "$ROUNDS"); do
  for w in $WARMUPS; do
    echo "--- round $r, warm-up $w, loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "kafka: $(timeout 300 $J bench.ListOffsetsBench $KB lo-1m 10000 "$w" 2>/dev/null | tail -1)"
    for by in receive-time send-time; do
      echo "tidemark $by: $(timeout 300 ./tidemark perf lookup --bootstrap "$B" --topic lo-1m --lookups 10000 \
        --warmup "$w" --by $by 2>&1 | tail -1)"
    done
  done
done
