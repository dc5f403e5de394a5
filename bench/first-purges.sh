#!/usr/bin/env bash
# A fresh 3-broker `local up` cluster through its groups' first Raft log purges: 6 partitions RF 3, 300,000 records of
# 1 KiB as fast as possible, then RUNS (8) `tidemark perf end-to-end` runs of 30 s at 4,000 records/s (the partition
# groups reach their first snapshot, 10,000 entries, in about the fifth); prints each run's end-to-end latency, then
# per broker the leaderships lost ("Lost leadership" in its log) and each purge's segment deletions (the times of
# Ratis' "Purged RaftLog segment" lines, grouped by purge).
# Usage, from the project checkout: [RUNS=N] bench/first-purges.sh [JAR] (default cli/target/tidemark.jar; another
# build's jar for an A/B). Port 29092 and up; the cluster is stopped and its directory deleted at the end.
set -uo pipefail
JAR=${1:-cli/target/tidemark.jar}; RUNS=${RUNS:-8}
W=$(mktemp -d); B=127.0.0.1:29092,127.0.0.1:29102,127.0.0.1:29112
trap 'timeout 120 java -jar "$JAR" local down --name purges --data-dir "$W/t" >/dev/null 2>&1; rm -rf "$W"' EXIT
echo "# $(date -u) nproc=$(nproc) jar=$JAR"
timeout 240 java -jar "$JAR" local up --name purges --nodes 3 --base-port 29092 --data-dir "$W/t" >/dev/null || exit 1
java -jar "$JAR" topics create --bootstrap $B --topic p6 --partitions 6 --replication-factor 3 >/dev/null || exit 1
echo "max: $(timeout 600 java -jar "$JAR" perf produce --bootstrap $B --topic p6 --records 300000 --record-size 1024 \
  --throughput -1 2>&1 | tail -1)"
for r in $(seq 1 "$RUNS"); do
  echo "run $r: $(timeout 300 java -jar "$JAR" perf end-to-end --bootstrap $B --topic p6 --rate 4000 --duration 30s \
    --record-size 1024 2>&1 | grep -E '^end-to-end' | sed 's/.*measured [0-9]*, //')"
done
for log in "$W"/t/purges/node-*/broker.log; do
  node=$(basename "$(dirname "$log")")
  echo "$node: snapshots $(grep -c 'Took a snapshot' "$log"), leaderships lost $(grep -c 'Lost leadership' "$log")"
  grep 'Purged RaftLog segment' "$log" | sed -E 's/^[^T]*T([0-9:.]*).*(group-[0-9A-F]*)-Segmented.*/\2 \1/' | sort \
    | awk '{ split($2, t, ":"); s = t[1] * 3600 + t[2] * 60 + t[3]
             if ($1 != g || s - last > 5) { if (g != "") printf "  %s at %s: %d segments in %.3f s\n", g, at, n, last - first
                                            g = $1; n = 0; first = s; at = $2 }
             n++; last = s }
           END { if (g != "") printf "  %s at %s: %d segments in %.3f s\n", g, at, n, last - first }'
done
