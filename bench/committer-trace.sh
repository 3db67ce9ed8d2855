#!/usr/bin/env bash
# bench/committer-trace.sh — where the ledger's committer spends a run of
# Engine.Settle, from a Go execution trace.
#
#   bench/committer-trace.sh              # 64 callers, GOGC=400, 20,000 settlements
#   CALLERS=8 N=5000 bench/committer-trace.sh
#   GOGC=100 GOMAXPROCS=3 bench/committer-trace.sh
#   TRACE=/tmp/settle.trace bench/committer-trace.sh   # summarize a trace taken before
#
# Runs BenchmarkSettle with -trace (the settings of the environment apply),
# finds the committer goroutine (the one whose stacks show ledger's
# (*Ledger).run) and prints:
#   - the share of its time in each state (running, runnable, in a system
#     call, waiting) and, per kind of transition, how many there were and the
#     median and 90th percentile of the time until the next one: the wait
#     for a P after its yield (runtime.Gosched, Ledger.run), after a system
#     call the runtime took its P away in (syscall -> runnable), and so on;
#   - the share of the run's time by the committer's state and by how many
#     goroutines were running at once (0, 1, 2 or more) and whether any was
#     runnable: "syscall running=1 runnable" is time in which the committer
#     held a P in a system call (its page writes and fdatasyncs) while
#     another goroutine waited for one.
#
# It reads the text that `go tool trace -d=parsed` prints (Go 1.26), a
# debugging format of the go command, not a stable interface: if a later Go
# changes it, the script says so rather than print a wrong summary. What
# it showed in stop 43 of issue 22 (2 CPUs, 64 callers, GOGC=400) is in
# the README, "What bounds the engine".
set -euo pipefail
cd "$(dirname "$0")/.."
callers=${CALLERS:-64}
n=${N:-20000}
trace=${TRACE:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [[ -z "$trace" ]]; then
  trace="$work/settle.trace"
  export GOGC=${GOGC:-400}
  echo "+ GOGC=$GOGC GOMAXPROCS=${GOMAXPROCS:-} go test ./fiscal -run '^\$' -bench '^BenchmarkSettle\$/^callers=$callers\$' -benchtime ${n}x -trace" >&2
  (cd fiscal && go test -run '^$' -bench "^BenchmarkSettle\$/^callers=$callers\$" -benchtime "${n}x" -trace "$trace") |
    grep -E '^Benchmark' >&2
fi
go tool trace -d=parsed "$trace" >"$work/parsed.txt"
if ! grep -q StateTransition "$work/parsed.txt"; then
  echo "bench/committer-trace.sh: go tool trace -d=parsed printed no state transitions (another Go's format?)" >&2
  exit 1
fi
# Pass 1 (awk): the committer's transitions and the run's states. It prints
# "state NAME NS", "run STATE RUNNING RUNNABLE NS" and, for every transition
# of the committer, "dur KEY NS" (KEY: the move and its reason), which sort
# and pass 2 turn into counts and quantiles.
awk '
/^M=/ {
  gid = ""
  if ($4 != "StateTransition" || $6 !~ /^GoID=/) next
  gid = substr($6, 6)
  split($7, mv, "->")
  reason = ""
  if (match($0, /Reason="[^"]*"/)) reason = substr($0, RSTART + 8, RLENGTH - 9)
  n++
  ev_t[n] = substr($5, 6) + 0; ev_g[n] = gid; ev_from[n] = mv[1]; ev_to[n] = mv[2]; ev_r[n] = reason
  next
}
gid != "" && /\(\*Ledger\)\.run/ { committer[gid] = 1 }
END {
  # Of the goroutines seen in Ledger.run (a benchmark opens a ledger per
  # run of b.N), the one with the most transitions.
  for (i = 1; i <= n; i++) if (ev_g[i] in committer) cnt[ev_g[i]]++
  for (g in cnt) if (cnt[g] > best_n) { c = g; best_n = cnt[g] }
  if (c == "") exit 1
  for (i = 1; i <= n; i++) {
    t = ev_t[i]
    if (started) {
      k = cstate " " (running > 2 ? 2 : running) " " (runnable > 0 ? "runnable" : "none")
      run[k] += t - last_t
    }
    last_t = t
    if (ev_from[i] == "Running") running--
    if (ev_to[i] == "Running") running++
    if (ev_from[i] == "Runnable") runnable--
    if (ev_to[i] == "Runnable") runnable++
    if (ev_g[i] != c) continue
    if (started) {
      print "dur", key, t - prev_t
      state[cstate] += t - prev_t
    }
    started = 1; prev_t = t; cstate = ev_to[i]
    key = ev_from[i] "->" ev_to[i] (ev_r[i] != "" ? "(" ev_r[i] ")" : "")
    gsub(/ /, "_", key)
  }
  print "committer", c, best_n
  for (s in state) print "state", s, state[s]
  for (k in run) print "run", k, run[k]
}' "$work/parsed.txt" >"$work/pass1.txt" || { echo "bench/committer-trace.sh: no committer goroutine in the trace" >&2; exit 1; }
# Pass 2: the durations of each kind of transition sorted, then the report.
{ grep -v '^dur ' "$work/pass1.txt"; grep '^dur ' "$work/pass1.txt" | sort -k2,2 -k3,3n; } | awk '
$1 == "committer" { c = $2; transitions = $3; next }
$1 == "state" { state[$2] = $3; c_total += $3; next }
$1 == "run" { run[$2 " running=" $3 " " $4] = $5; r_total += $5; next }
$1 == "dur" {
  if ($2 != key) { if (key != "") report(); key = $2; m = 0; sum = 0 }
  v[++m] = $3; sum += $3
  next
}
function report() {
  lines[++nl] = sprintf("  %-32s %7d %9.1f %9.1f %9.1f", key, m, sum / 1e6, v[int((m + 1) / 2)] / 1e3, v[int(m * 0.9) > 0 ? int(m * 0.9) : 1] / 1e3)
  weight[nl] = sum
}
END {
  if (key != "") report()
  printf "committer goroutine %s: %d transitions over %.1f ms\n", c, transitions, c_total / 1e6
  for (s in state) printf "  %-10s %5.1f %%\n", s, 100 * state[s] / c_total
  print "after each kind of transition, until the next: count, total ms, median µs, p90 µs"
  for (i = 1; i <= nl; i++) if (weight[i] / c_total >= 0.005) print lines[i]
  print "the run by the committer state, goroutines running (2: two or more), any runnable:"
  # largest share first (a few tens of lines)
  while (1) {
    top = ""
    for (k in run) if (top == "" || run[k] > run[top]) top = k
    if (top == "" || run[top] / r_total < 0.005) break
    printf "  %-34s %5.1f %%\n", top, 100 * run[top] / r_total
    delete run[top]
  }
}'
