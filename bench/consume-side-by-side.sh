#!/usr/bin/env bash
# Consuming, side by side in one run: Kafka 4.4 (3 brokers, KRaft) and Tidemark (`tidemark local up`, 3 nodes), the
# same records: PARTS (default 6) partitions, RF 3, RECORDS (default 300,000) records of 1 KiB produced as fast as
# possible, then read from the start by one consumer (Kafka's ConsumerPerformance, which subscribes: its line gives
# records/s with and without the group's rebalance; `tidemark perf consume`, which assigns every partition), READS (3)
# times one after another: the first reads meet brokers whose fetch path the JIT has not compiled yet.
# Usage, from the project checkout: [PARTS=N] [RECORDS=N] [READS=N] bench/consume-side-by-side.sh [ROUNDS]   (K, T per round)
# Uses the Kafka harness of ../shared/bench/kafka (bench/kafka-harness.sh).
set -uo pipefail
PROJ=$(cd "$(dirname "$0")/.." && pwd); ROUNDS=${1:-2}; PARTS=${PARTS:-6}; RECORDS=${RECORDS:-300000}; READS=${READS:-3}
. "$PROJ/bench/kafka-harness.sh"
W=$(mktemp -d)
kafka_round() {
  "$K/run-cluster.sh" 3 19092 "$W/k" >/dev/null 2>&1 || { echo "kafka did not start"; return; }
  local B=127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094 t0=$SECONDS
  # KRaft takes at most 10,000 records in one controller batch: more than 5,000 partitions go in steps of 5,000
  local made=$((PARTS < 5000 ? PARTS : 5000))
  timeout 600 $J org.apache.kafka.tools.TopicCommand --bootstrap-server $B --create --topic c$PARTS --partitions $made \
    --replication-factor 3 >/dev/null
  while [ "$made" -lt "$PARTS" ]; do
    made=$((made + 5000 < PARTS ? made + 5000 : PARTS))
    timeout 600 $J org.apache.kafka.tools.TopicCommand --bootstrap-server $B --alter --topic c$PARTS --partitions $made >/dev/null
  done
  echo "kafka created in $((SECONDS - t0)) s"
  echo "kafka produce: $(timeout 600 $J org.apache.kafka.tools.ProducerPerformance --topic c$PARTS --num-records $RECORDS --record-size 1024 --throughput -1 --producer-props bootstrap.servers=$B acks=all 2>"$W/kafka-produce.err" | tail -1)"
  echo "kafka produce errors: $(grep -c Exception "$W/kafka-produce.err") (a consumer short of RECORDS waits out its 120 s timeout)"
  echo "kafka consume x$READS (start.time, end.time, MB, MB/s, records, records/s, rebalance ms, fetch ms, fetch MB/s, fetch records/s):"
  for i in $(seq 1 "$READS"); do   # a new group each time (the tool's default group id is random)
    echo "  $(timeout 600 $J org.apache.kafka.tools.ConsumerPerformance --bootstrap-server $B --topic c$PARTS --num-records $RECORDS --timeout 120000 2>/dev/null | tail -1)"
  done
  "$K/stop-cluster.sh" "$W/k" >/dev/null 2>&1; rm -rf "$W/k"
}
tidemark_round() {
  local out B t0 led=0
  out=$(cd "$PROJ" && timeout 240 ./tidemark local up --name cons --nodes 3 --base-port 29092 --data-dir "$W/t" 2>&1)
  B=$(grep -oE '127\.0\.0\.1:[0-9]+(,127\.0\.0\.1:[0-9]+)*' <<<"$out" | head -1)
  [ -n "$B" ] || { echo "tidemark did not start: ${out: -200}"; return; }
  t0=$SECONDS
  (cd "$PROJ" && timeout 600 ./tidemark topics create --bootstrap "$B" --topic c$PARTS --partitions $PARTS --replication-factor 3 >/dev/null)
  while [ $((SECONDS - t0)) -lt 300 ]; do   # every partition led, as Kafka's create answers
    led=$(cd "$PROJ" && ./tidemark topics describe --bootstrap "$B" --topic c$PARTS --output json 2>/dev/null | grep -c '"leader":[1-9]')
    [ "$led" -ge "$PARTS" ] && break; sleep 2
  done
  echo "tidemark leaders: $led/$PARTS after $((SECONDS - t0)) s"
  echo "tidemark produce: $(cd "$PROJ" && timeout 600 ./tidemark perf produce --bootstrap "$B" --topic c$PARTS --records $RECORDS --record-size 1024 --throughput -1 2>&1 | tail -1)"
  for i in $(seq 1 "$READS"); do
    echo "tidemark consume $i: $(cd "$PROJ" && timeout 600 ./tidemark perf consume --bootstrap "$B" --topic c$PARTS --records $RECORDS 2>&1 | tail -1)"
  done
  (cd "$PROJ" && timeout 120 ./tidemark local down --name cons --data-dir "$W/t" >/dev/null 2>&1)
  rm -rf "$W/t"
}
echo "# $(date -u) nproc=$(nproc) project=$(git -C "$PROJ" rev-parse --short HEAD) partitions=$PARTS records=$RECORDS"
for r in $(seq 1 "$ROUNDS"); do
  echo "--- round $r loadavg $(cut -d' ' -f1-3 /proc/loadavg)"; kafka_round; tidemark_round
done
rm -rf "$W"
