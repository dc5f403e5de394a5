#!/usr/bin/env bash
# Many partitions on a 3-broker `tidemark local up` cluster: seconds from `topics create` until every partition
# has a leader, threads and resident memory per broker, then produce to and consume from all partitions.
# Usage: bench/many-partitions.sh [PARTITIONS] [RECORDS]   (defaults: 10000 partitions, 200000 records of 1 KiB)
# Env: BASE_PORT (default 29200), DATA (default a new temporary directory), TIDEMARK_BROKER_JAVA_OPTS, CONFIG (a
#      broker config file every broker reads, e.g. raft.snapshot.interval.entries=100 for snapshots during the load).
set -uo pipefail
PARTS=${1:-10000}; RECORDS=${2:-200000}
cd "$(dirname "$0")/.."
BASE=${BASE_PORT:-29200}; DATA=${DATA:-$(mktemp -d)}; NAME=many
B=127.0.0.1:$BASE,127.0.0.1:$((BASE + 10)),127.0.0.1:$((BASE + 20))
stop() { timeout 120 ./tidemark local down --name $NAME --data-dir "$DATA" >/dev/null 2>&1; }
trap stop EXIT
brokers() {   # "node threads rss_mib open_files" per broker
  for n in 1 2 3; do
    local pid; pid=$(cat "$DATA/$NAME/node-$n/broker.pid" 2>/dev/null) || continue
    echo "node $n: $(ls /proc/"$pid"/task | wc -l) threads, $(( $(awk '/VmRSS/ {print $2}' /proc/"$pid"/status) / 1024 )) MiB RSS, $(ls /proc/"$pid"/fd | wc -l) open files"
  done
}
echo "# $(date -u) nproc=$(nproc) loadavg $(cut -d' ' -f1-3 /proc/loadavg) project=$(git rev-parse --short HEAD) partitions=$PARTS"
timeout 240 ./tidemark local up --name $NAME --nodes 3 --base-port "$BASE" --data-dir "$DATA" ${CONFIG:+--config "$CONFIG"} \
  >/dev/null || exit 1
echo "idle cluster:"; brokers
start=$SECONDS
timeout 300 ./tidemark topics create --bootstrap "$B" --topic many --partitions "$PARTS" --replication-factor 3 || exit 1
led=0
while [ $((SECONDS - start)) -lt 600 ]; do
  led=$(./tidemark topics describe --bootstrap "$B" --topic many --output json 2>/dev/null | grep -c '"leader":[1-9]')
  [ "$led" -ge "$PARTS" ] && break
  echo "  $led/$PARTS led after $((SECONDS - start)) s"; sleep 5
done
echo "leaders: $led/$PARTS after $((SECONDS - start)) s"
brokers
echo "produce: $(timeout 600 ./tidemark perf produce --bootstrap "$B" --topic many --records "$RECORDS" --record-size 1024 --throughput -1 2>&1 | tail -1)"
echo "consume: $(timeout 600 ./tidemark perf consume --bootstrap "$B" --topic many --records "$RECORDS" 2>&1 | tail -1)"
echo "after the load:"; brokers
# A partition group's snapshot: how long its capture held the group's apply thread, and how long its fsyncs and file
# took on the snapshot writer (on the apply thread too before 2026-12-04).
for n in 1 2 3; do
  log="$DATA/$NAME/node-$n/broker.log"
  held=$(grep -o 'captured in [0-9]* ms' "$log" | awk '{print $3}' | sort -n | tail -1)
  took=$(grep -o 'written in [0-9]* ms' "$log" | awk '{print $3}' | sort -n | tail -1)
  echo "node $n: $(grep -c 'captured in' "$log") snapshots; longest on the apply thread ${held:-0} ms; longest write ${took:-0} ms"
done
