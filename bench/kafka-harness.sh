# Sourced by the side-by-side scripts (PROJ set to the project checkout): the Kafka harness of ../shared/bench/kafka,
# copied to ~/.cache/tidemark-bench/kafka and built there once. Sets K (its folder), CP (its classpath) and J (a java
# command on that classpath, quiet logging, 1 GiB heap).
K=${XDG_CACHE_HOME:-$HOME/.cache}/tidemark-bench/kafka
[ -d "$K" ] || { mkdir -p "$(dirname "$K")" && cp -r "$PROJ/../shared/bench/kafka" "$K"; } || exit 1
[ -d "$K/target/lib" ] || (cd "$K" && mvn -B -q -DskipTests package) || { echo "could not build the Kafka harness in $K"; exit 1; }
CP="$K/target/classes:$K/target/lib/*"
J="java -Dlog4j2.configurationFile=$K/config/log4j2-quiet.properties -Xmx1g -cp $CP"
