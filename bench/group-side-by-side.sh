#!/usr/bin/env bash
# Consumer-group rebalances and commits side by side, in one run: Kafka 4.4 (3 brokers, KRaft, consumers on the
# consumer protocol of KIP-848) and Tidemark (`tidemark local up`, 3 nodes), the same steps: `tidemark perf group` and
# its Kafka twin bench/kafka/KafkaGroupPerf.java. MEMBERS (10) members join a topic of PARTS (100) partitions at once,
# an 11th joins, one leaves, one dies (DEATH=1, a 45 s session timeout on both), then COMMIT_SECONDS (10) of commits.
# Usage, from the project checkout: [PARTS=N] [MEMBERS=N] [DEATH=1] [COMMIT_SECONDS=N] bench/group-side-by-side.sh [ROUNDS]
# Uses the Kafka harness of ../shared/bench/kafka (bench/kafka-harness.sh).
set -uo pipefail
PROJ=$(cd "$(dirname "$0")/.." && pwd); ROUNDS=${1:-1}
PARTS=${PARTS:-100}; MEMBERS=${MEMBERS:-10}; COMMIT_SECONDS=${COMMIT_SECONDS:-10}
. "$PROJ/bench/kafka-harness.sh"
W=$(mktemp -d)
kafka_round() {
  "$K/run-cluster.sh" 3 19092 "$W/k" >/dev/null 2>&1 || { echo "kafka did not start"; return; }
  timeout 600 $J "$PROJ/bench/kafka/KafkaGroupPerf.java" 127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094 \
    group-perf "$PARTS" "$MEMBERS" "$COMMIT_SECONDS" ${DEATH:+death} 2>&1 | grep -E "balanced|commits|Exception" | sed 's/^/kafka    /'
  "$K/stop-cluster.sh" "$W/k" >/dev/null 2>&1; rm -rf "$W/k"
}
tidemark_round() {
  local out B
  out=$(cd "$PROJ" && timeout 240 ./tidemark local up --name grp --nodes 3 --base-port 29092 --data-dir "$W/t" 2>&1)
  B=$(grep -oE '127\.0\.0\.1:[0-9]+(,127\.0\.0\.1:[0-9]+)*' <<<"$out" | head -1)
  [ -n "$B" ] || { echo "tidemark did not start: ${out: -200}"; return; }
  (cd "$PROJ" && timeout 600 ./tidemark perf group --bootstrap "$B" --partitions "$PARTS" --members "$MEMBERS" \
    --commit-seconds "$COMMIT_SECONDS" ${DEATH:+--death} 2>&1 | grep -E "balanced|commits|rror" | sed 's/^/tidemark /')
  (cd "$PROJ" && timeout 60 ./tidemark local down --name grp --data-dir "$W/t" >/dev/null 2>&1)
  rm -rf "$W/t"
}
echo "# $(date -u) nproc=$(nproc) project=$(git -C "$PROJ" rev-parse --short HEAD) parts=$PARTS members=$MEMBERS"
for r in $(seq 1 "$ROUNDS"); do
  echo "--- round $r loadavg $(cut -d' ' -f1-3 /proc/loadavg)"; kafka_round; tidemark_round
done
rm -rf "$W"
