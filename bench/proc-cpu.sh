# Sourced by the bench scripts that print processes' CPU. cpu_s PID...: the CPU seconds (user + system) those
# processes used so far, from /proc/PID/stat; a PID that is gone counts 0.
cpu_s() {
  local t=0 p
  for p in "$@"; do [ -r /proc/$p/stat ] && t=$((t + $(awk '{print $14 + $15}' /proc/$p/stat))); done
  awk -v t=$t -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", t / hz}'
}
