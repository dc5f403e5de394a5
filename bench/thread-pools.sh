# Sourced by the bench scripts that count a JVM's work by thread pool, from /proc and a thread dump.
# thread_ticks PIDS: "PID TID ticks" (user + system CPU, clock ticks) of every thread of the PIDs given.
# thread_switches PIDS: "PID TID switches" (voluntary + involuntary context switches) of every thread.
# thread_pools PIDS: "PID TID pool" of every thread, named from a thread dump with numbers and group ids left out.
# by_pool NAMES BEFORE AFTER SCALE FORMAT: the growth of the counts from BEFORE to AFTER summed by pool, each times
#   SCALE, printed with FORMAT (e.g. "%8.1f"), the top 12 and the whole ("all"), largest first.
thread_ticks() {
  local p t
  for p in "$@"; do for t in /proc/$p/task/*; do
    awk -v p=$p -v t="${t##*/}" '{print p, t, $14 + $15}' "$t/stat" 2>/dev/null
  done; done
}
thread_switches() {
  local p t
  for p in "$@"; do for t in /proc/$p/task/*; do
    awk -v p=$p -v t="${t##*/}" '/^(non)?voluntary_ctxt_switches/ {s += $2} END {print p, t, s}' "$t/status" 2>/dev/null
  done; done
}
thread_pools() {
  local p
  for p in "$@"; do jcmd "$p" Thread.print 2>/dev/null | grep -oE '^"[^"]+".* nid=0x[0-9a-f]+' \
    | sed -E 's/^"([^"]+)".* nid=0x([0-9a-f]+)$/\2 \1/' | while read -r nid name; do
      echo "$p $((16#$nid)) $(sed -E 's/[0-9a-fA-F]{8,}(-[0-9a-fA-F]{4,})*//g; s/[0-9]+/N/g; s/ /_/g' <<<"$name")"
    done; done
}
by_pool() {
  awk -v scale="$4" -v format="  $5 %s\n" 'FILENAME == ARGV[1] {pool[$1 " " $2] = $3; next}
    FILENAME == ARGV[2] {before[$1 " " $2] = $3; next}
    {k = $1 " " $2; d = $3 - before[k]; p = (k in pool) ? pool[k] : "(not in the dump)"; by[p] += d; all += d}
    END {for (p in by) printf format, by[p] * scale, p; printf format, all * scale, "all"}' "$1" "$2" "$3" \
    | sort -rn | head -13
}
