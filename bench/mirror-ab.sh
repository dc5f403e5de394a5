#!/usr/bin/env bash
# The mirror of two builds against each other: one source and one target one-broker `tidemark local up` cluster
# (this checkout's build), 1M x 1 KiB on a 1-partition topic, then alternating `tidemark mirror` runs of BEFORE's and
# this checkout's jar, each into a fresh target topic (`--topic-prefix`), timed by `tidemark perf mirror`.
# Usage: bench/mirror-ab.sh BEFORE [ROUNDS]   (BEFORE: another checkout with cli/target/tidemark.jar built, e.g. a
#        `git worktree` of the commit before; default 3 rounds)
# Env: BASE_PORT (default 29900; the target gets BASE_PORT + 100), DATA (default a new temporary directory).
set -uo pipefail
BEFORE=$(cd "${1:?usage: bench/mirror-ab.sh BEFORE [ROUNDS]}" && pwd); ROUNDS=${2:-3}
cd "$(dirname "$0")/.."
AFTER=$(pwd)
SRC=${BASE_PORT:-29900}; TGT=$((SRC + 100)); DATA=${DATA:-$(mktemp -d)}
stop() {
  timeout 120 ./tidemark local down --name a --data-dir "$DATA/a" >/dev/null 2>&1
  timeout 120 ./tidemark local down --name b --data-dir "$DATA/b" >/dev/null 2>&1
}
trap stop EXIT
echo "# $(date -u) nproc=$(nproc) loadavg $(cut -d' ' -f1-3 /proc/loadavg) before=$(git -C "$BEFORE" rev-parse --short HEAD) after=$(git rev-parse --short HEAD)"
timeout 240 ./tidemark local up --name a --nodes 1 --base-port "$SRC" --data-dir "$DATA/a" >/dev/null || exit 1
timeout 240 ./tidemark local up --name b --nodes 1 --base-port "$TGT" --data-dir "$DATA/b" >/dev/null || exit 1
./tidemark topics create --bootstrap 127.0.0.1:$SRC --topic bench --partitions 1 >/dev/null || exit 1
echo "source: $(timeout 300 ./tidemark perf produce --bootstrap 127.0.0.1:$SRC --topic bench --records 1000000 --record-size 1024 2>&1 | tail -1)"
run() {   # $1 checkout whose mirror runs, $2 target topic prefix
  java -Xmx1g -jar "$1/cli/target/tidemark.jar" mirror --source 127.0.0.1:$SRC --source-name a \
    --target 127.0.0.1:$TGT --topics bench --topic-prefix "$2." > "$DATA/mirror-$2.log" 2>&1 &
  local mirror=$!
  timeout 600 ./tidemark perf mirror --source 127.0.0.1:$SRC --target 127.0.0.1:$TGT --topic bench \
    --target-topic "$2.bench" 2>&1 | tail -1
  kill $mirror; wait $mirror 2>/dev/null
  echo "  (mirror log $DATA/mirror-$2.log: $(grep -ciE 'warn|error' "$DATA/mirror-$2.log") warnings or errors)"
}
for r in $(seq 1 "$ROUNDS"); do
  echo "round $r, before: $(run "$BEFORE" before$r)"
  echo "round $r, after:  $(run "$AFTER" after$r)"
done
