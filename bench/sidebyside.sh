#!/usr/bin/env bash
# bench/sidebyside.sh — issue 22's rows for two commits, alternated in one run.
#
#   bench/sidebyside.sh OLD [NEW]     # NEW defaults to the work tree (HEAD plus changes)
#   ROUNDS=5 bench/sidebyside.sh aa20204
#   N=2000 bench/sidebyside.sh aa20204    # shorter raw, Settle and HTTP runs (default 10,000 records, as bench/run.sh)
#
# Builds the test binaries of both sources (OLD from a temporary detached
# worktree), then runs, ROUNDS times (default 3) and alternating old/new so
# that the machine's drift hits both alike: Engine.Settle at 1/8/64 callers,
# the real server over HTTP at 32 clients, the committer's serial section
# (BenchmarkCommitSerial); then receipt.Verify, the 100 k growth point and
# ledger.Check once each; the raw bbolt ceiling once (its code is the same in
# both). Prints the raw lines and, per row and side, the median of every
# metric. Run it on a quiet machine: wall-time rows move with other load,
# the CPU rows (committer-cpu, cpu-µs) much less.
#
# The HTTP rows drive each side's server binary with one load generator, the
# NEW side's BenchmarkServerHTTP (FISCAL402_SERVER_BIN), so that they compare
# servers, not clients: client=lean (the row bench/run.sh reports) and
# client=nethttp (Go's net/http client, the benchmark's client before the
# lean one) for both sides; [old-own] is the OLD side's own benchmark, as
# that commit measured itself.
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: bench/sidebyside.sh OLD [NEW]}
new=${2:-}
rounds=${ROUNDS:-3}
n=${N:-10000} # records a run of the raw, Settle and HTTP rows
work=$(mktemp -d)
trap 'git worktree remove --force "$work/old" >/dev/null 2>&1 || true; git worktree remove --force "$work/new" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add -q --detach "$work/old" "$old"
if [[ -n "$new" ]]; then git worktree add -q --detach "$work/new" "$new"; src_new="$work/new"; else src_new=$(pwd); fi
src_old="$work/old"
for side in old new; do
  src=src_$side
  for p in fiscal ledger receipt examples/server; do
    (cd "${!src}" && go test -c -o "$work/bin/$side.$(basename "$p")" "./$p")
  done
  (cd "${!src}" && go build -o "$work/bin/$side.serverbin" ./examples/server)
done
out="$work/raw.txt"
: >"$out"
log() { echo "== $* $(date +%T) load $(cut -d' ' -f1 /proc/loadavg)" | tee -a "$out"; }
run() { local dir=$1; shift; (cd "$dir" && "$@" 2>&1 | grep -E '^Benchmark' | tee -a "$out") || true; }
log raw
run "$src_new/ledger" "$work/bin/new.ledger" -test.run '^$' -test.bench 'BenchmarkRawBolt/bytes=entry/callers=(1|8|32|64)$' -test.benchtime "${n}x"
for r in $(seq 1 "$rounds"); do
  for side in old new; do src=src_$side; log settle "$side" round "$r"
    run "${!src}/fiscal" "$work/bin/$side.fiscal" -test.run '^$' -test.bench 'BenchmarkSettle$' -test.benchtime "${n}x" -test.benchmem; done
  for side in old new; do src=src_$side; log http "$side" round "$r"
    # the new side's load generator against this side's server binary (a
    # benchmark that predates FISCAL402_SERVER_BIN builds the server of its
    # working directory: this side's all the same)
    FISCAL402_SERVER_BIN="$work/bin/$side.serverbin" run "${!src}/examples/server" "$work/bin/new.server" -test.run '^$' -test.bench 'BenchmarkServerHTTP$' -test.benchtime "${n}x"; done
  # and the old side as its own benchmark measures it (its client, its way)
  log http old-own round "$r"
  run "$src_old/examples/server" "$work/bin/old.server" -test.run '^$' -test.bench 'BenchmarkServerHTTP$' -test.benchtime "${n}x"
  for side in old new; do src=src_$side; log serial "$side" round "$r"
    run "${!src}/ledger" "$work/bin/$side.ledger" -test.run '^$' -test.bench 'BenchmarkCommitSerial/form=(entry|bare)$' -test.benchtime 4000x; done
done
for side in old new; do src=src_$side; log once "$side"
  run "${!src}/receipt" "$work/bin/$side.receipt" -test.run '^$' -test.bench 'BenchmarkVerify(V3|V4|Floor|V4Floor)?$' -test.benchtime 2000x -test.benchmem
  FISCAL402_BENCH_SCALE=100k run "${!src}/fiscal" "$work/bin/$side.fiscal" -test.run '^$' -test.bench 'BenchmarkSettleScale$' -test.benchtime 1x -test.timeout 30m
  run "${!src}/ledger" "$work/bin/$side.ledger" -test.run '^$' -test.bench 'BenchmarkCheckRate/records=100k/' -test.benchtime 3x
done
log done
# Medians per row and side.
awk '
/^== raw/ { side="raw"; next }
/^== / { side=$3; next }
/^Benchmark/ {
  name=$1; sub(/-[0-9]+$/, "", name)
  key=name " [" side "]"
  if (!(key in seen)) { seen[key]=1; order[++n]=key }
  for (i=3; i<NF; i+=2) { m=key SUBSEP $(i+1); vals[m]=vals[m] " " $i; if (!((key, $(i+1)) in has)) { has[key, $(i+1)]=1; units[key]=units[key] " " $(i+1) } }
}
function median(s,   a, k, i, j, t) {
  k=split(s, a, " ")
  for (i=1; i<=k; i++) for (j=i+1; j<=k; j++) if (a[j]+0 < a[i]+0) { t=a[i]; a[i]=a[j]; a[j]=t }
  return (k%2) ? a[(k+1)/2] : (a[k/2]+a[k/2+1])/2
}
END {
  print ""
  print "medians:"
  for (i=1; i<=n; i++) {
    key=order[i]; line=key
    k=split(units[key], u, " ")
    for (j=1; j<=k; j++) line=line sprintf(" %s=%g", u[j], median(vals[key SUBSEP u[j]]))
    print line
  }
}' "$out"
