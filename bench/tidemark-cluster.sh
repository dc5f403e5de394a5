# Sourced by the bench scripts that run a 3-broker `tidemark local up` cluster, from the project's root.
# cluster_up NAME BASE_PORT DATA_DIR TOPIC PARTITIONS: starts the cluster (its brokers' JVM options from an exported
# TIDEMARK_BROKER_JAVA_OPTS, a broker config file every broker reads from BROKER_CONFIG), creates TOPIC with
# PARTITIONS partitions, RF 3 (topic configs from TOPIC_CONFIG, e.g. "--config flush.ms=1000"), and waits up to
# 120 s until every partition has a leader. Sets B (the bootstrap) and LED (the partitions led); fails when the
# cluster or the topic could not be made.
cluster_up() {
  local name=$1 base=$2 data=$3 topic=$4 parts=$5
  B=127.0.0.1:$base,127.0.0.1:$((base + 10)),127.0.0.1:$((base + 20))
  timeout 240 ./tidemark local up --name "$name" --nodes 3 --base-port "$base" --data-dir "$data" \
    ${BROKER_CONFIG:+--config "$BROKER_CONFIG"} >/dev/null || return 1
  ./tidemark topics create --bootstrap "$B" --topic "$topic" --partitions "$parts" --replication-factor 3 \
    ${TOPIC_CONFIG:-} >/dev/null || return 1
  for _ in $(seq 1 60); do
    LED=$(./tidemark topics describe --bootstrap "$B" --topic "$topic" --output json 2>/dev/null \
      | grep -c '"leader":[1-9]')
    [ "$LED" -ge "$parts" ] && break; sleep 2
  done
}
