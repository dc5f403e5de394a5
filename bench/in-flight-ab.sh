#!/usr/bin/env bash
# Batches of a partition in flight, 1 against 5, on one 3-broker `tidemark local up` cluster: a warm-up, then
# alternating `perf produce --max-in-flight 1|5`, as fast as possible and at a fixed 4,000 records/s (linger.ms 0).
# Usage: bench/in-flight-ab.sh [PARTITIONS] [ROUNDS]   (defaults: 6 partitions, 2 rounds; 1 KiB records, RF 3)
# Env: BASE_PORT (default 29700), DATA (default a new temporary directory).
set -uo pipefail
PARTS=${1:-6}; ROUNDS=${2:-2}
cd "$(dirname "$0")/.."
BASE=${BASE_PORT:-29700}; DATA=${DATA:-$(mktemp -d)}; NAME=inflight
stop() { timeout 120 ./tidemark local down --name $NAME --data-dir "$DATA" >/dev/null 2>&1; }
trap stop EXIT
perf() { timeout 180 ./tidemark perf produce --bootstrap "$B" --topic p --record-size 1024 "$@" 2>&1 | tail -1; }
echo "# $(date -u) nproc=$(nproc) loadavg $(cut -d' ' -f1-3 /proc/loadavg) project=$(git rev-parse --short HEAD) partitions=$PARTS"
. bench/tidemark-cluster.sh
cluster_up $NAME "$BASE" "$DATA" p "$PARTS" || exit 1
echo "leaders: $LED/$PARTS"
echo "warm-up: $(perf --records 300000 --throughput -1 --max-in-flight 1)"
for r in $(seq 1 "$ROUNDS"); do
  for f in 1 5; do
    echo "round $r, in flight $f, max:   $(perf --records 200000 --throughput -1 --max-in-flight $f)"
    echo "round $r, in flight $f, fixed: $(perf --records 80000 --throughput 4000 --linger-ms 0 --max-in-flight $f)"
  done
done
