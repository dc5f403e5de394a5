#!/usr/bin/env bash
# What TLS costs, side by side in one run: Kafka 4.4 (3 brokers, KRaft) and Tidemark (`tidemark local up`, 3 nodes),
# each in plain text and with mutual TLS on every connection (clients, replication, controllers / Raft), the load of
# ../shared/bench/side-by-side.sh: PARTS (6) partitions, RF 3, 1 KiB records, acks of all replicas; the maximum rate
# (300,000 records), then a fixed 4,000 records/s with linger.ms=0 (120,000 records) with the CPU seconds of the three
# brokers. Kafka's TLS listeners take the PEM files `tidemark certs create` makes (ssl.keystore.type=PEM), so both
# use the same keys (EC P-256) and the JDK's TLS 1.3; Tidemark's TLS cluster also runs its authorizer (local up --tls).
# Usage, from the project checkout: [PARTS=N] bench/tls-side-by-side.sh [ROUNDS]   (order per round: K, K-TLS, T, T-TLS)
# Uses the Kafka harness of ../shared/bench/kafka (bench/kafka-harness.sh).
set -uo pipefail
PROJ=$(cd "$(dirname "$0")/.." && pwd); ROUNDS=${1:-2}; PARTS=${PARTS:-6}
. "$PROJ/bench/kafka-harness.sh"
W=$(mktemp -d)
CERTS=$W/certs
(cd "$PROJ" && ./tidemark certs create --dir "$CERTS" --nodes 3 --clients admin >/dev/null) || { echo "certs create failed"; exit 1; }
for who in broker-1 broker-2 broker-3 admin; do cat "$CERTS/$who.key" "$CERTS/$who.pem" > "$CERTS/$who.keystore.pem"; done
ssl_props() {   # the TLS settings of a Kafka broker or client holding WHO's certificate
  printf '%s\n' ssl.keystore.type=PEM "ssl.keystore.location=$CERTS/$1.keystore.pem" ssl.truststore.type=PEM \
    "ssl.truststore.location=$CERTS/ca.pem" ssl.enabled.protocols=TLSv1.3 ssl.protocol=TLSv1.3
}
ssl_props admin > "$W/kafka-client-tls.properties"; echo security.protocol=SSL >> "$W/kafka-client-tls.properties"
: > "$W/kafka-client-plain.properties"
. "$PROJ/bench/proc-cpu.sh"
cpu_line() {
  awk -v who="$1" -v a="$2" -v b="$3" 'BEGIN {printf "%s fixed cpu: %.2f s of the 3 brokers for 120000 records (%.1f ms per 1000)\n", who, b - a, (b - a) * 1000 / 120}'
}
kafka_start() {   # kafka_start plain|tls DIR: 3 nodes, broker + controller each, the settings of run-cluster.sh
  local mode=$1 D=$2 proto=PLAINTEXT voters="" id i
  [ "$mode" = tls ] && proto=SSL
  mkdir -p "$D"; : > "$D/pids"
  for i in 1 2 3; do voters="${voters:+$voters,}$i@127.0.0.1:$((19191 + i))"; done
  id=$($J kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)
  for i in 1 2 3; do
    mkdir -p "$D/node$i/data"
    { printf '%s\n' process.roles=broker,controller node.id=$i controller.quorum.voters=$voters \
        "listeners=CLIENT://127.0.0.1:$((19091 + i)),CONTROLLER://127.0.0.1:$((19191 + i))" \
        "advertised.listeners=CLIENT://127.0.0.1:$((19091 + i))" controller.listener.names=CONTROLLER \
        inter.broker.listener.name=CLIENT "listener.security.protocol.map=CONTROLLER:$proto,CLIENT:$proto" \
        "log.dirs=$D/node$i/data" num.partitions=1 default.replication.factor=3 offsets.topic.replication.factor=3 \
        transaction.state.log.replication.factor=3 transaction.state.log.min.isr=1 \
        share.coordinator.state.topic.replication.factor=3 share.coordinator.state.topic.min.isr=1 \
        group.initial.rebalance.delay.ms=0 auto.create.topics.enable=false
      [ "$mode" = tls ] && { ssl_props broker-$i; echo ssl.client.auth=required; }
    } > "$D/node$i/server.properties"
    $J kafka.tools.StorageTool format -t "$id" -c "$D/node$i/server.properties" --ignore-formatted > "$D/node$i/format.log" 2>&1
    nohup java -Xmx1g -Xms1g -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 \
      -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true -Dlog4j2.configurationFile="$K/config/log4j2.properties" \
      -Dkafka.logs.dir="$D/node$i" -cp "$CP" kafka.Kafka "$D/node$i/server.properties" > "$D/node$i/server.log" 2>&1 < /dev/null &
    echo $! >> "$D/pids"
  done
}
kafka_round() {
  local mode=$1 D=$W/k B=127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094 cfg=$W/kafka-client-$1.properties t0=$SECONDS
  kafka_start "$mode" "$D"
  until $J org.apache.kafka.tools.TopicCommand --bootstrap-server $B --command-config "$cfg" --create --topic p$PARTS \
      --partitions $PARTS --replication-factor 3 >/dev/null 2>&1; do
    [ $((SECONDS - t0)) -lt 120 ] || { echo "kafka-$mode did not start"; break; }; sleep 2
  done
  echo "kafka-$mode max:   $(timeout 180 $J org.apache.kafka.tools.ProducerPerformance --topic p$PARTS --num-records 300000 --record-size 1024 --throughput -1 --producer.config "$cfg" --producer-props bootstrap.servers=$B acks=all | tail -1)"
  local pids c0 c1; pids=$(cat "$D/pids"); c0=$(cpu_s $pids)
  echo "kafka-$mode fixed: $(timeout 180 $J org.apache.kafka.tools.ProducerPerformance --topic p$PARTS --num-records 120000 --record-size 1024 --throughput 4000 --producer.config "$cfg" --producer-props bootstrap.servers=$B acks=all linger.ms=0 | tail -1)"
  c1=$(cpu_s $pids); cpu_line "kafka-$mode" "$c0" "$c1"
  kill $pids 2>/dev/null; for p in $pids; do while kill -0 "$p" 2>/dev/null; do sleep 0.5; done; done
  rm -rf "$D"
}
tidemark_round() {
  local mode=$1 out B tls=() client=() t0=$SECONDS led=0
  [ "$mode" = tls ] && { tls=(--tls --certs-dir "$CERTS"); client=(--command-config "$CERTS/admin.properties"); }
  out=$(cd "$PROJ" && timeout 240 ./tidemark local up --name tls --nodes 3 --base-port 29092 --data-dir "$W/t" "${tls[@]}" 2>&1)
  B=$(grep -oE '127\.0\.0\.1:[0-9]+(,127\.0\.0\.1:[0-9]+)*' <<<"$out" | head -1)
  [ -n "$B" ] || { echo "tidemark-$mode did not start: ${out: -200}"; return; }
  (cd "$PROJ" && ./tidemark topics create --bootstrap "$B" "${client[@]}" --topic p$PARTS --partitions $PARTS --replication-factor 3 >/dev/null)
  while [ $((SECONDS - t0)) -lt 120 ]; do   # every partition led, as Kafka's create waits for
    led=$(cd "$PROJ" && ./tidemark topics describe --bootstrap "$B" "${client[@]}" --topic p$PARTS --output json 2>/dev/null | grep -c '"leader":[1-9]')
    [ "$led" -ge "$PARTS" ] && break; sleep 2
  done
  echo "tidemark-$mode max:   $(cd "$PROJ" && timeout 180 ./tidemark perf produce --bootstrap "$B" "${client[@]}" --topic p$PARTS --records 300000 --record-size 1024 --throughput -1 2>&1 | tail -1)"
  local pids c0 c1; pids=$(awk 1 "$W"/t/tls/node-*/broker.pid 2>/dev/null); c0=$(cpu_s $pids)
  echo "tidemark-$mode fixed: $(cd "$PROJ" && timeout 180 ./tidemark perf produce --bootstrap "$B" "${client[@]}" --topic p$PARTS --records 120000 --record-size 1024 --throughput 4000 --linger-ms 0 2>&1 | tail -1)"
  c1=$(cpu_s $pids); cpu_line "tidemark-$mode" "$c0" "$c1"
  (cd "$PROJ" && timeout 60 ./tidemark local down --name tls --data-dir "$W/t" >/dev/null 2>&1)
  rm -rf "$W/t"
}
echo "# $(date -u) nproc=$(nproc) project=$(git -C "$PROJ" rev-parse --short HEAD) parts=$PARTS"
for r in $(seq 1 "$ROUNDS"); do
  echo "--- round $r loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
  kafka_round plain; kafka_round tls; tidemark_round plain; tidemark_round tls
done
rm -rf "$W"
