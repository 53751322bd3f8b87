#!/usr/bin/env bash
# bench.sh - `make bench`: loadprobe beside wrk, hey and vegeta, against one
# local nginx, loopback only. See bench/BENCH.md for the method and findings.
#
#   throughput : closed loop, CONNS keep-alive connections, DUR s, nginx "/":
#                wrk, hey, loadprobe (concurrency: [CONNS]); REPS rounds,
#                interleaved (wrk, hey, loadprobe, then again ...)
#   rate       : open loop at each of RATES req/s for DUR s: vegeta, loadprobe
#                (rate: [R]); REPS rounds, interleaved
#   maxrate    : the highest rate each of vegeta and loadprobe holds: RATE_START,
#                +RATE_STEP ... up to RATE_LIMIT, one DUR s run each, until the
#                achieved rate (as the tool reports it, or as nginx counts it)
#                falls below HOLD of the offered one; then REFINE more runs
#                halve the interval between the last rate held and that one
#   gobench    : go test -bench for the per-request cost of recording an
#                attempt (BenchmarkRecordAttempt and its parts), and the CPU
#                of the shop flow with templates and with a script
#                (BenchmarkScriptedFlow, docs/scripts.md), and an HTTP/3
#                attempt beside a bare http3.Transport loop
#                (BenchmarkHTTP3Attempt, docs/http3.md)
#   open       : issue 11's open loop, REPS rounds of: loadprobe's closed loop
#                (CONNS connections, the reference), then loadprobe's open
#                loop at each of OPEN_RATES and at OPEN_FRACTION x that round's
#                closed-loop rate. The OPEN_RATES runs capture the traffic
#                (tcpdump on lo, data segments only) for nginx's own p50: the
#                time from a request's packet to its response's on the wire.
#                Last in each round, overload: OVERLOAD_FACTOR x the highest
#                rate held (maxrate's, when it ran first; else the highest of
#                the round's open-loop runs that held with no drop)
#   latency    : closed loop, LAT_CONNS connections to bench/delaytarget's
#                /delay?ms=LAT_DELAY_MS: wrk, loadprobe; the server measures
#                its own handler time, so the overhead is p99 - server p99
#   https      : closed loop, CONNS keep-alive connections over TLS to nginx
#                offering HTTP/1.1 only (a self-signed certificate made for
#                the run): wrk, loadprobe with default settings
#   h2         : the same against nginx offering h2 and http/1.1 by ALPN:
#                wrk (HTTP/1.1), h2load -c CONNS -m1, loadprobe with default
#                settings (HTTP/2, one stream per connection)
#   h2streams  : HTTP/2 with 10 streams per connection: h2load -c CONNS/10
#                -m10 (-m10 row), loadprobe at concurrency CONNS with
#                http2.streams_per_connection 10 (-s10 row)
#   conns      : closed loop at each of SCALE_CONNS keep-alive connections:
#                wrk, loadprobe; nginx's active connections sampled mid-run
#   websocket  : message round trips per generator CPU-second against
#                `loadprobe target`'s /ws echo (pinned as nginx is): loadprobe's
#                closed loop beside a bare gorilla/websocket loop, 8 sessions
#                (go test -bench BenchmarkWebSocketRoundTrips)
#   templated  : closed loop as throughput, loadprobe alone, POST with a
#                fixed body (-body) and with a body templated with {{index}}
#                and {{random_int}} (-template); REPS rounds, interleaved
#   grpc       : unary gRPC calls in flight, CONNS streams on one HTTP/2
#                connection, DUR s, against `loadprobe target --grpc-listen`'s
#                Noop (pinned as nginx is): ghz, h2load (the call framed by
#                hand as an HTTP/2 POST), loadprobe; REPS rounds, interleaved
#
# The Markdown summary is printed and written to OUT_MD (bench/RESULTS.md);
# raw outputs, exact command lines and /usr/bin/time -v data stay in
# bench/runs/<UTC stamp>/.
#
# Knobs (environment): REPS=3 DUR=10 CONNS=50 TIMEOUT=5 RATES="1000 10000"
#   RATE_START=20000 RATE_STEP=20000 RATE_LIMIT=200000 HOLD=0.99 REFINE=2
#   MAX_IN_FLIGHT=1000 (open loop: loadprobe max_in_flight, vegeta -max-workers)
#   SCENARIOS="gobench throughput rate maxrate open latency https h2 h2streams conns
#   websocket templated grpc" OPEN_RATES="2000 20000" OPEN_FRACTION=0.8 OVERLOAD_FACTOR=1.5
#   CAPTURE=1 LAT_CONNS=10
#   LAT_DELAY_MS=20 SCALE_CONNS="1000 10000" PIN=1 COOLDOWN=1
#   QUIET_WAIT=120 QUIET_CORES=0.25 NOISE_CORES=0.3 MAX_ATTEMPTS=3
#   QUICK=1 (REPS=1 DUR=3, a smoke test; does not write OUT_MD unless set)
#   INSTALL=1 (apt-get/go install what is missing; 0: fail instead)
#   PEERS_CLOSED="wrk hey" PEERS_RATE=vegeta (the peers beside loadprobe)
#   LOADPROBE_BINS="name=path ..." compares prebuilt loadprobe binaries as rows
#   of their own (e.g. before/after a change) instead of building the tree.
#
# PIN=1 (default, needs 2 CPUs): the nginx worker runs on CPU 0 and the
# generator on CPU 1, so each generator gets exactly one core (wrk -t1, Go
# generators with GOMAXPROCS=1) and cannot take the server's.
#
# Noise: the machine may be shared. Before each measured run the script waits
# (up to QUIET_WAIT s) until processes other than ours use < QUIET_CORES, and
# repeats a run during which they used > NOISE_CORES (or the hypervisor stole
# that much), up to MAX_ATTEMPTS; the last attempt counts and is flagged.
#
# Every load is bounded twice: by the tool's own duration and by `timeout`.
# Load goes only to 127.0.0.1, to an nginx (or delaytarget) this script
# started on a free port, after checking that the port is that process's.
# The file limit is raised for the 10 000-connection runs (ulimit -n).
set -u -o pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
TOOLS_DIR="$HERE/.tools"
export PATH="$TOOLS_DIR/bin:/usr/local/go/bin:$PATH"

if [ "${QUICK:-0}" = 1 ]; then
  REPS=${REPS:-1}; DUR=${DUR:-3}; RATE_LIMIT=${RATE_LIMIT:-40000}
  OUT_MD=${OUT_MD:-/dev/null}
fi
REPS=${REPS:-3}
DUR=${DUR:-10}
CONNS=${CONNS:-50}
TIMEOUT=${TIMEOUT:-5}
RATES=${RATES:-"1000 10000"}
RATE_START=${RATE_START:-20000}
RATE_STEP=${RATE_STEP:-20000}
RATE_LIMIT=${RATE_LIMIT:-200000}
HOLD=${HOLD:-0.99}
REFINE=${REFINE:-2}
MAX_IN_FLIGHT=${MAX_IN_FLIGHT:-1000}
SCENARIOS=${SCENARIOS:-"gobench throughput rate maxrate open latency https h2 h2streams conns websocket templated grpc"}
OPEN_RATES=${OPEN_RATES:-"2000 20000"}
OPEN_FRACTION=${OPEN_FRACTION:-0.8}
OVERLOAD_FACTOR=${OVERLOAD_FACTOR:-1.5}
CAPTURE=${CAPTURE:-1}
LAT_CONNS=${LAT_CONNS:-10}
LAT_DELAY_MS=${LAT_DELAY_MS:-20}
SCALE_CONNS=${SCALE_CONNS:-"1000 10000"}
PIN=${PIN:-1}
COOLDOWN=${COOLDOWN:-1}
QUIET_WAIT=${QUIET_WAIT:-120}
QUIET_CORES=${QUIET_CORES:-0.25}
NOISE_CORES=${NOISE_CORES:-0.3}
MAX_ATTEMPTS=${MAX_ATTEMPTS:-3}
INSTALL=${INSTALL:-1}
PEERS_CLOSED=${PEERS_CLOSED:-"wrk hey"}
PEERS_RATE=${PEERS_RATE:-vegeta}
OUT_MD=${OUT_MD:-$HERE/RESULTS.md}
VEGETA_VERSION=v12.13.0
GHZ_VERSION=v0.93.0

STAMP=$(date -u +%Y%m%d-%H%M%S)
RUN="$HERE/runs/$STAMP"
mkdir -p "$RUN/raw"
RESULTS="$RUN/results.jsonl"
: > "$RESULTS"
LOG="$RUN/bench.log"
CLK_TCK=$(getconf CLK_TCK)
NCPU=$(nproc)

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" | tee -a "$LOG" >&2; }
die() { log "FATAL: $*"; exit 1; }

# ------------------------------------------------------------------ install
install_missing() {
  local need=() c
  declare -A pkg=([nginx]=nginx [wrk]=wrk [hey]=hey [taskset]=util-linux [jq]=jq
                  [curl]=curl [ss]=iproute2 [timeout]=coreutils [getconf]=libc-bin
                  [openssl]=openssl [tcpdump]=tcpdump [h2load]=nghttp2-client)
  for c in "${!pkg[@]}"; do command -v "$c" >/dev/null 2>&1 || need+=("${pkg[$c]}"); done
  [ -x /usr/bin/time ] || need+=(time)
  if [ ${#need[@]} -gt 0 ]; then
    [ "$INSTALL" = 1 ] || die "missing: ${need[*]} (INSTALL=0)"
    log "installing ${need[*]}"
    apt-get update -qq || die "apt-get update failed"
    local try
    for try in 1 2 3; do   # another apt/dpkg may hold the lock for a moment
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null && break
      [ "$try" = 3 ] && die "apt-get install ${need[*]} failed"
      sleep 5
    done
  fi
  if ! [ -x "$TOOLS_DIR/bin/vegeta" ]; then
    [ "$INSTALL" = 1 ] || die "vegeta missing in $TOOLS_DIR/bin (INSTALL=0)"
    log "installing vegeta $VEGETA_VERSION into $TOOLS_DIR/bin"
    mkdir -p "$TOOLS_DIR/bin"
    # From outside the module, so that its go.mod is neither read nor touched.
    (cd "$TOOLS_DIR" && GOBIN="$TOOLS_DIR/bin" GOFLAGS= go install "github.com/tsenart/vegeta/v12@$VEGETA_VERSION") \
      || die "go install vegeta failed"
  fi
  if ! [ -x "$TOOLS_DIR/bin/ghz" ]; then
    [ "$INSTALL" = 1 ] || die "ghz missing in $TOOLS_DIR/bin (INSTALL=0)"
    log "installing ghz $GHZ_VERSION into $TOOLS_DIR/bin"
    mkdir -p "$TOOLS_DIR/bin"
    (cd "$TOOLS_DIR" && GOBIN="$TOOLS_DIR/bin" GOFLAGS= go install "github.com/bojand/ghz/cmd/ghz@$GHZ_VERSION") \
      || die "go install ghz failed"
  fi
}

if [ "$PIN" = 1 ] && [ "$NCPU" -ge 2 ]; then
  SRV_PIN=(taskset -c 0); GEN_PIN=(taskset -c 1); GEN_CPUS=1
else
  SRV_PIN=(); GEN_PIN=(); GEN_CPUS=$NCPU; PIN=0
fi

# 10 000 connections need as many descriptors in nginx and the generator.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

# ------------------------------------------------------------------ helpers
proc_ticks() { if [ -r "/proc/$1/stat" ]; then sed 's/.*) //' "/proc/$1/stat" | awk '{print $12+$13}'; else echo 0; fi; }
busy_ticks() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }   # without idle, iowait, steal
steal_ticks() { awk '/^cpu /{print $9}' /proc/stat; }
num() { awk -v x="$1" 'BEGIN{ if (x ~ /^-?[0-9.]+([eE][-+]?[0-9]+)?$/) print x+0; else print "null" }'; }

# wait_quiet: sample 1 s at a time until processes other than our server use
# less than QUIET_CORES, at most QUIET_WAIT s. Sets PRE_BUSY and WAITED.
wait_quiet() {
  local b0 b1 s0 s1 w=0
  while :; do
    b0=$(busy_ticks); s0=$(proc_ticks "$SRV"); sleep 1; b1=$(busy_ticks); s1=$(proc_ticks "$SRV")
    PRE_BUSY=$(awk -v b="$(( b1 - b0 - (s1 - s0) ))" -v t="$CLK_TCK" 'BEGIN{x=b/t; if (x<0) x=0; printf "%.2f", x}')
    awk -v x="$PRE_BUSY" -v q="$QUIET_CORES" 'BEGIN{exit !(x <= q)}' && break
    w=$(( w + 1 ))
    if [ "$w" -ge "$QUIET_WAIT" ]; then log "still busy (${PRE_BUSY} cores used by others) after ${w}s; running anyway"; break; fi
  done
  WAITED=$w
  [ "$w" -gt 0 ] && [ "$w" -lt "$QUIET_WAIT" ] && log "waited ${w}s for other load to fade"
  return 0
}

# ------------------------------------------------------------------ nginx
NGX_PID=""; GEN_PID=""; CAP_PID=""; WS_PID=""; GT_PID=""; SRV=""; SRV_KIND=nginx; URL=""; LP_TLS=""
cleanup() {
  [ -n "$GEN_PID" ] && kill "$GEN_PID" 2>/dev/null
  [ -n "$CAP_PID" ] && kill "$CAP_PID" 2>/dev/null
  [ -n "$WS_PID" ] && { kill "$WS_PID" 2>/dev/null; wait "$WS_PID" 2>/dev/null; WS_PID=""; }
  [ -n "$GT_PID" ] && { kill "$GT_PID" 2>/dev/null; wait "$GT_PID" 2>/dev/null; GT_PID=""; }
  [ -n "$NGX_PID" ] && { kill "$NGX_PID" 2>/dev/null; wait "$NGX_PID" 2>/dev/null; }
  [ -n "$DT_PID" ] && { kill "$DT_PID" 2>/dev/null; wait "$DT_PID" 2>/dev/null; }
  GEN_PID=""; NGX_PID=""; DT_PID=""; CAP_PID=""
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

start_nginx() {
  local d="$RUN/nginx" i p="" try eph
  mkdir -p "$d/logs" "$d/tmp"
  # The https scenario's certificate: self-signed for 127.0.0.1, made now.
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 \
    -keyout "$d/key.pem" -out "$d/cert.pem" >/dev/null 2>&1 || die "openssl could not make a certificate"
  # Ports below the ephemeral range: one inside it may be held by a client
  # socket (thousands of TIME_WAITs after a run) though nobody listens.
  eph=$(awk '{print $1}' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
  [ "${eph:-0}" -gt 12000 ] || eph=60000
  for try in 1 2 3 4 5; do
    for i in $(seq 1 200); do
      p=$(( 10000 + RANDOM % (eph - 10001) ))
      [ -z "$(ss -Htan "sport = :$p or sport = :$(( p + 1 )) or sport = :$(( p + 2 ))" 2>/dev/null)" ] && break
    done
    sed "s/@PORT@/$p/; s/@TLSPORT@/$(( p + 1 ))/; s/@H2PORT@/$(( p + 2 ))/" "$HERE/nginx.conf.in" > "$d/nginx.conf"
    "${SRV_PIN[@]}" nginx -p "$d/" -c nginx.conf -e logs/error.log -g 'daemon off;' > "$d/logs/stdout" 2>&1 &
    NGX_PID=$!
    for i in $(seq 1 50); do
      NGX_WORKER=$(cat "/proc/$NGX_PID/task/$NGX_PID/children" 2>/dev/null | awk '{print $1}')
      [ -n "$NGX_WORKER" ] && [ -n "$(ss -Htlnp "sport = :$p" 2>/dev/null | grep "pid=$NGX_PID,")" ] && break
      kill -0 "$NGX_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$NGX_PID" 2>/dev/null && break
    wait "$NGX_PID" 2>/dev/null; NGX_PID=""
    log "nginx did not start on ports $p-$(( p + 2 )) (see $d/logs); others"
  done
  [ -n "$NGX_PID" ] || die "nginx did not start (see $d/logs)"
  # Only ever load ports that this nginx listens on.
  for i in "$p" "$(( p + 1 ))" "$(( p + 2 ))"; do
    ss -Htlnp "sport = :$i" 2>/dev/null | grep -q "pid=$NGX_PID," || die "port $i is not our nginx's"
  done
  curl -s --max-time 2 "http://127.0.0.1:$p/nginx_status" | grep -q '^Active connections' || die "no stub_status on $p"
  curl -s --max-time 2 --cacert "$d/cert.pem" "https://127.0.0.1:$(( p + 1 ))/" | grep -q '^ok' || die "no https on $(( p + 1 ))"
  NGX_PORT=$p
  NGX_URL="http://127.0.0.1:$p/"
  NGX_TLS_URL="https://127.0.0.1:$(( p + 1 ))/"
  NGX_H2_URL="https://127.0.0.1:$(( p + 2 ))/"
  NGX_CERT="$d/cert.pem"
  log "nginx master $NGX_PID worker $NGX_WORKER on $NGX_URL and $NGX_TLS_URL"
}

# start_delaytarget: bench/delaytarget (built from the tree) on a free
# loopback port, on the server's CPU.
DT_PID=""
start_delaytarget() {
  local d="$RUN/delaytarget" i
  mkdir -p "$d"
  (cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$d/delaytarget" ./bench/delaytarget) || die "go build delaytarget failed"
  "${SRV_PIN[@]}" env GOMAXPROCS="$GEN_CPUS" "$d/delaytarget" -portfile "$d/addr" > "$d/log" 2>&1 &
  DT_PID=$!
  for i in $(seq 1 50); do [ -s "$d/addr" ] && break; sleep 0.1; done
  [ -s "$d/addr" ] || die "delaytarget did not start (see $d/log)"
  DT_ADDR=$(cat "$d/addr")
  ss -Htlnp "sport = :${DT_ADDR##*:}" 2>/dev/null | grep -q "pid=$DT_PID," || die "$DT_ADDR is not our delaytarget's"
  log "delaytarget $DT_PID on $DT_ADDR"
}

# The target of the runs to come: use_nginx [tls] or use_delaytarget sets URL
# (what the generators load), SRV (the server process whose CPU is counted
# apart) and SRV_KIND (how requests are counted on the server's side).
use_nginx() {
  [ -n "$NGX_PID" ] || start_nginx
  URL=$NGX_URL; SRV=$NGX_WORKER; SRV_KIND=nginx; LP_TLS=""
  # loadprobe with its default settings (ALPN offers h2 and http/1.1) and
  # the run's certificate, verified: tls is nginx offering HTTP/1.1 only,
  # h2 nginx offering both.
  case ${1:-} in
    tls) URL=$NGX_TLS_URL; LP_TLS=", tls_config: {ca_file: \"$NGX_CERT\"}" ;;
    h2) URL=$NGX_H2_URL; LP_TLS=", tls_config: {ca_file: \"$NGX_CERT\"}" ;;
  esac
}
use_delaytarget() {
  [ -n "$DT_PID" ] || start_delaytarget
  URL="http://$DT_ADDR/delay?ms=$LAT_DELAY_MS"; SRV=$DT_PID; SRV_KIND=delay; LP_TLS=""
}

# use_grpctarget: `loadprobe target` with its gRPC service on a free loopback
# port, on the server's CPU; the runs call its Noop. It keeps no count of
# calls: the figures are the tools' own.
use_grpctarget() {
  if [ -z "$GT_PID" ]; then
    local tlog="$RUN/grpc-target.log" i
    "${SRV_PIN[@]}" env GOMAXPROCS="$GEN_CPUS" "${BIN[${LP_NAMES[0]}]}" target --listen=127.0.0.1:0 --grpc-listen=127.0.0.1:0 > "$tlog" 2>&1 &
    GT_PID=$!
    for i in $(seq 1 50); do
      GRPC_ADDR=$(grep 'serving gRPC' "$tlog" | grep -o 'address=127\.0\.0\.1:[0-9]*' | head -1 | cut -d= -f2)
      [ -n "$GRPC_ADDR" ] && break
      sleep 0.1
    done
    [ -n "$GRPC_ADDR" ] || die "loadprobe target did not serve gRPC (see $tlog)"
    ss -Htlnp "sport = :${GRPC_ADDR##*:}" 2>/dev/null | grep -q "pid=$GT_PID," || die "$GRPC_ADDR is not our target's"
    # The empty message (Noop's {}), framed as gRPC frames it: no
    # compression, length 0. h2load sends it as each POST's body.
    printf '\x00\x00\x00\x00\x00' > "$RUN/grpc-noop.bin"
    log "gRPC target $GT_PID on $GRPC_ADDR"
  fi
  URL="grpc://$GRPC_ADDR"; SRV=$GT_PID; SRV_KIND=grpc; LP_TLS=""
}

ngx_status() { curl -s --max-time 2 "${NGX_URL}nginx_status"; }
# srv_counts -> "connections requests" so far, from the server's side.
# delaytarget counts the /delay requests since its last /__reset.
srv_counts() {
  case $SRV_KIND in
    nginx) ngx_status | awk 'NR==3{print $1, $3}' ;;
    delay) curl -s --max-time 2 "http://$DT_ADDR/__stats" | jq -r '"0 \(.n)"' ;;
    grpc) echo "0 0" ;;
  esac
}
# The two status polls of nginx's around a run are requests too.
srv_polls() { [ "$SRV_KIND" = nginx ] && echo 1 || echo 0; }

# drained: wait (up to 15 s) until the last run's connections are gone, so
# that no run starts against a server still holding another's.
drained() {
  local i a
  for i in $(seq 1 150); do
    case $SRV_KIND in
      nginx) a=$(ngx_status | awk 'NR==1{print $3 - 1}') ;;
      delay) a=$(ss -Htan state established "dport = :${DT_ADDR##*:}" 2>/dev/null | wc -l) ;;
      grpc) a=$(ss -Htan state established "dport = :${GRPC_ADDR##*:}" 2>/dev/null | wc -l) ;;
    esac
    [ "${a:-0}" -le 0 ] && return 0
    sleep 0.1
  done
  log "the server still holds $a connections; going on"
}

# wire_p50 PCAP: the median time from a request's data segment to its
# response's, per connection, in ms: nginx's own latency as the wire sees it.
wire_p50() {
  tcpdump -r "$1" -nn -tt --time-stamp-precision=nano 2>/dev/null | awk -v port="$NGX_PORT" '
    $3 ~ /^127\.0\.0\.1\./ && $5 ~ /^127\.0\.0\.1\./ {
      src = $3; dst = $5; sub(/:$/, "", dst)
      if (dst ~ "\\." port "$") { q[src] = q[src] " " $1 }           # a request
      else if (src ~ "\\." port "$" && q[dst] != "") {               # its response
        split(substr(q[dst], 2), t, " "); printf "%.6f\n", ($1 - t[1]) * 1000
        q[dst] = substr(q[dst], length(t[1]) + 2)
      }
    }' | sort -n | awk '{v[NR] = $1} END { if (NR) print v[int((NR + 1) / 2)]; else print "null" }'
}

# ------------------------------------------------------------------ generators
# Rows: NAME -> KIND (wrk hey vegeta loadprobe) and, for loadprobe, its binary.
declare -A KIND BIN
LP_NAMES=()

# cmd_KIND NAME MODE(closed|rate) CONNS RATE P -> CMD=(argv)
cmd_wrk() { CMD=(wrk -t"$GEN_CPUS" -c"$3" -d"$DUR"s --timeout "$TIMEOUT"s --latency "$URL"); }
# h2load: -m1 at CONNS connections, or (a -m10 row) CONNS/10 connections
# of 10 streams each; one thread, as wrk -t1. Against the gRPC target:
# CONNS calls in flight on one connection, each POST's body the framed
# Noop call (the grpc scenario, below).
cmd_h2load() {
  if [ "$SRV_KIND" = grpc ]; then
    CMD=(h2load -t1 -c1 -m "$3" -D "$DUR" -H 'content-type: application/grpc' -H 'te: trailers'
         -d "$RUN/grpc-noop.bin" "http://$GRPC_ADDR/loadprobe.demo.v1.Target/Noop")
    return
  fi
  local c=$3 m=1
  case $1 in *-m10) c=$(( $3 / 10 )); m=10 ;; esac
  CMD=(h2load -t"$GEN_CPUS" -c"$c" -m"$m" -D "$DUR" "$URL")
}
cmd_hey() { CMD=(hey -z "$DUR"s -c "$3" -t "$TIMEOUT" "$URL"); }
cmd_vegeta() {
  printf 'GET %s\n' "$URL" > "$5.targets"
  # -max-workers as loadprobe's max_in_flight: past its capacity vegeta
  # otherwise starts workers (and connections) without bound, until nginx
  # runs out of connections and the runs after it measure the wreck.
  CMD=(vegeta attack -targets "$5.targets" -duration "$DUR"s -timeout "$TIMEOUT"s -rate "$4/1s"
       -max-workers "$MAX_IN_FLIGHT" -output "$5.bin")
}
# gRPC: CONNS calls in flight on one connection, the tools' defaults for
# the rest; ghz and loadprobe take the method's types from the committed
# descriptor set, h2load sends the framed bytes.
cmd_ghz() {
  CMD=(ghz --insecure --protoset "$ROOT/demo/target/target.protoset" --call loadprobe.demo.v1.Target/Noop
       -d '{}' -c "$3" --connections 1 -z "$DUR"s -t "$TIMEOUT"s -O json "$GRPC_ADDR")
}
cmd_loadprobe() {
  local load="concurrency: [$3]"
  [ "$2" = rate ] && load="rate: [$4], max_in_flight: $MAX_IN_FLIGHT"
  # The templated scenario's rows: the same POST, its body fixed or templated.
  local body=""
  case $1 in
    *-body) body=", method: POST, body: '{\"id\": 123456, \"n\": 789}'" ;;
    *-template) body=", method: POST, body: '{\"id\": {{index}}, \"n\": {{random_int 1 999}}}'" ;;
    *-s10) body=", http2: {streams_per_connection: 10}" ;;
  esac
  local request="{url: \"$URL\", timeout: ${TIMEOUT}s$LP_TLS$body}"
  [ "$SRV_KIND" = grpc ] && request="{url: \"$URL\", timeout: ${TIMEOUT}s, grpc: {method: loadprobe.demo.v1.Target/Noop, message: '{}', descriptors: \"$ROOT/demo/target/target.protoset\", connections: 1}}"
  cat > "$5.yml" <<EOF
allowed_targets: ["127.0.0.1"]
max_rate: 1000000
max_concurrency: 20000
probes:
  - name: bench
    request: $request
    load: {$load, step_duration: ${DUR}s}
EOF
  CMD=("${BIN[$1]}" run --config.file="$5.yml" --output=json)
}

# parse_KIND P -> JSON object: count (requests the tool counts), rps (its
# achieved rate), p99_ms, errors (non-2xx and transport errors), dropped.
parse_wrk() {
  awk '
    function ms(v,  n,u){ n=v+0; u=v; sub(/^[0-9.]+/,"",u)
      if(u=="us")return n/1000; if(u=="ms")return n; if(u=="s")return n*1000; if(u=="m")return n*60000; return n }
    / requests in /{count=$1} /^Requests\/sec:/{rps=$2} /^ +99% /{p99=ms($2)} /^ +50% /{p50=ms($2)}
    /Non-2xx or 3xx responses:/{non=$NF}
    /Socket errors:/{gsub(/,/,""); errs=$4+$6+$8+$10}
    END{ printf "{\"count\":%s,\"rps\":%s,\"p50_ms\":%s,\"p99_ms\":%s,\"errors\":%d,\"dropped\":null}\n",
         count==""?"null":count, rps==""?"null":rps, p50==""?"null":p50, p99==""?"null":p99, non+errs }' "$1.out"
}
# h2load counts HTTP/2 responses: a gRPC call's status is in its trailers,
# which it does not read (Noop always answers OK).
parse_h2load() {
  awk '
    /^finished in /{rps=$4}
    /^requests: /{count=$8; errs=$10+$12+$14}
    /^status codes: /{non=$5+$7+$9}
    END{ printf "{\"count\":%s,\"rps\":%s,\"p50_ms\":null,\"p99_ms\":null,\"errors\":%d,\"dropped\":null}\n",
         count==""?"null":count, rps==""?"null":rps, errs+non }' "$1.out"
}
parse_hey() {
  awk '
    /^ +Requests\/sec:/{rps=$2} /^ +99% in /{p99=$3*1000}
    /^Status code distribution:/{sec="codes"; next} /^Error distribution:/{sec="errs"; next}
    sec=="codes" && /^ +\[[0-9]+\]/{ c=$1; gsub(/[\[\]]/,"",c); count+=$2; if (c<200||c>299) errs+=$2 }
    sec=="errs" && /^ +\[[0-9]+\]/{ n=$1; gsub(/[\[\]]/,"",n); count+=n; errs+=n }
    END{ printf "{\"count\":%d,\"rps\":%s,\"p99_ms\":%s,\"errors\":%d,\"dropped\":null}\n",
         count, rps==""?"null":rps, p99==""?"null":p99, errs }' "$1.out"
}
parse_ghz() {
  jq -c '{count: .count, rps: .rps,
          p50_ms: ([.latencyDistribution[]? | select(.percentage == 50) | .latency / 1e6] | first),
          p99_ms: ([.latencyDistribution[]? | select(.percentage == 99) | .latency / 1e6] | first),
          errors: ([.statusCodeDistribution // {} | to_entries[] | select(.key != "OK") | .value] | add // 0),
          dropped: null}' "$1.out" 2>/dev/null || echo '{}'
}
post_vegeta() {   # untimed: decode the results file
  [ -s "$1.bin" ] && vegeta report -type=json "$1.bin" > "$1.json" 2>>"$1.err"
  rm -f "$1.bin"
}
parse_vegeta() {
  # throughput: successful responses per second (over the attack and the wait
  # for the last responses), the figure comparable to loadprobe's throughput;
  # rate (the sending rate) is kept as sent_rps.
  jq -c '{count: .requests, rps: .throughput, sent_rps: .rate, p99_ms: (.latencies["99th"] / 1e6),
          errors: ([.status_codes | to_entries[] | select(.key | test("^2") | not) | .value] | add // 0),
          dropped: null}' "$1.json" 2>/dev/null || echo '{}'
}
parse_loadprobe() {
  jq -c '.probes[0].steps[0] as $s | {count: $s.attempts, rps: $s.throughput,
          p50_ms: ($s.latency_seconds.p50 * 1000), p99_ms: ($s.latency_seconds.p99 * 1000),
          errors: (([$s.errors[]] | add // 0) + ([$s.responses | to_entries[] | select(.key | test("^(2|OK$)") | not) | .value] | add // 0)),
          dropped: ($s.dropped // 0), gen_cpu: $s.generator_cpu_ratio}' "$1.out" 2>/dev/null || echo '{}'
}

# ------------------------------------------------------------------ one run
# run_one SC NAME MODE CONNS RATE REP: repeats a noisy run up to MAX_ATTEMPTS
# times; every attempt is a line in results.jsonl, the report keeps the last.
run_one() {
  local a
  for a in $(seq 1 "$MAX_ATTEMPTS"); do
    run_attempt "$@" "$a" && return 0
    [ "$a" -lt "$MAX_ATTEMPTS" ] && log "noisy run ($1 $2 rep$6): repeating"
  done
  return 0
}

run_attempt() {
  local sc=$1 name=$2 mode=$3 conns=$4 rate=$5 rep=$6 att=$7
  local kind=${KIND[$name]}
  local P="$RUN/raw/$sc/$name.r$rate.c$conns.$rep"
  [ "$att" -gt 1 ] && P="$P.try$att"
  mkdir -p "$RUN/raw/$sc"
  drained
  wait_quiet
  CMD=()
  "cmd_$kind" "$name" "$mode" "$conns" "$rate" "$P"
  local env=()
  case $kind in hey|vegeta|loadprobe|ghz) [ "$PIN" = 1 ] && env=(env GOMAXPROCS="$GEN_CPUS") ;; esac
  printf '%q ' "${GEN_PIN[@]}" "${env[@]}" "${CMD[@]}" > "$P.cmd"; echo >> "$P.cmd"

  # CAPTURE_RUN=1: the wire, for nginx's own latency (on the server's CPU).
  if [ "${CAPTURE_RUN:-0}" = 1 ]; then
    "${SRV_PIN[@]}" tcpdump -i lo -n -s 128 -B 65536 --time-stamp-precision=nano -w "$P.pcap" \
      "tcp port $NGX_PORT and (tcp[tcpflags] & tcp-push != 0)" 2> "$P.tcpdump" &
    CAP_PID=$!
    local i; for i in $(seq 1 50); do grep -q listening "$P.tcpdump" 2>/dev/null && break; sleep 0.1; done
  fi
  [ "$SRV_KIND" = delay ] && curl -s --max-time 2 "http://$DT_ADDR/__reset" >/dev/null

  local c0 n0 c1 n1 s0 s1 b0 b1 st0 st1 load1 mid=""
  read -r c0 n0 < <(srv_counts)
  s0=$(proc_ticks "$SRV"); b0=$(busy_ticks); st0=$(steal_ticks)
  load1=$(cut -d' ' -f1 /proc/loadavg)
  timeout -k 5 $(( DUR + 30 )) /usr/bin/time -v -o "$P.time" "${GEN_PIN[@]}" "${env[@]}" "${CMD[@]}" \
      > "$P.out" 2> "$P.err" < /dev/null &
  GEN_PID=$!
  # Halfway through: how many connections does nginx hold open?
  [ "$SRV_KIND" = nginx ] && { sleep "$(awk -v d="$DUR" 'BEGIN{print d/2}')"; mid=$(ngx_status | awk 'NR==1{print $3 - 1}'); }
  wait "$GEN_PID"; local rc=$?
  GEN_PID=""
  b1=$(busy_ticks); st1=$(steal_ticks); s1=$(proc_ticks "$SRV")
  read -r c1 n1 < <(srv_counts)
  declare -F "post_$kind" >/dev/null && "post_$kind" "$P"
  local srv_p50=null srv_p99=null wire=null
  if [ "$SRV_KIND" = delay ]; then
    read -r srv_p50 srv_p99 < <(curl -s --max-time 2 "http://$DT_ADDR/__stats" | jq -r '"\(.p50_ms // "null") \(.p99_ms // "null")"')
  fi
  if [ -n "$CAP_PID" ]; then
    kill -INT "$CAP_PID" 2>/dev/null; wait "$CAP_PID" 2>/dev/null; CAP_PID=""
    wire=$(wire_p50 "$P.pcap"); rm -f "$P.pcap"
  fi

  local user sys rss wall cpu srv_cpu other steal noisy=0
  user=$(awk -F': ' '/User time/{print $2}' "$P.time" 2>/dev/null)
  sys=$(awk -F': ' '/System time/{print $2}' "$P.time" 2>/dev/null)
  rss=$(awk -F': ' '/Maximum resident set size/{print $2}' "$P.time" 2>/dev/null)
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/{n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; print s}' "$P.time" 2>/dev/null)
  cpu=$(awk -v u="${user:-0}" -v s="${sys:-0}" 'BEGIN{printf "%.2f", u+s}')
  srv_cpu=$(awk -v a="$s0" -v b="$s1" -v t="$CLK_TCK" 'BEGIN{printf "%.2f", (b-a)/t}')
  other=$(awk -v a="$b0" -v b="$b1" -v t="$CLK_TCK" -v g="$cpu" -v s="$srv_cpu" 'BEGIN{o=(b-a)/t-g-s; if (o<0) o=0; printf "%.2f", o}')
  steal=$(awk -v a="$st0" -v b="$st1" -v t="$CLK_TCK" 'BEGIN{printf "%.2f", (b-a)/t}')
  local span=${wall:-$DUR}
  awk -v s="$span" 'BEGIN{exit !(s+0 > 0)}' || span=$DUR
  awk -v o="$other" -v st="$steal" -v s="$span" -v n="$NOISE_CORES" 'BEGIN{exit !(o/s > n || st/s > n)}' && noisy=1
  local parsed; parsed=$("parse_$kind" "$P" 2>>"$P.err"); [ -n "$parsed" ] || parsed='{}'

  # nginx counted the two status polls as well: minus one each side.
  local polls; polls=$(srv_polls)
  jq -cn --argjson p "$parsed" --arg sc "$sc" --arg name "$name" --arg kind "$kind" \
     --argjson rep "$rep" --argjson att "$att" --argjson rate "$rate" --argjson conns "$conns" \
     --argjson rc "$rc" --argjson wall "$(num "${wall:-}")" --argjson cpu "$cpu" --argjson rss_kb "$(num "${rss:-}")" \
     --argjson srv_reqs "$(( n1 - n0 - polls ))" --argjson srv_conns "$(( c1 - c0 - polls ))" --argjson srv_cpu "$srv_cpu" \
     --argjson others "$other" --argjson steal "$steal" --argjson noisy "$noisy" --argjson load1 "$load1" \
     --argjson waited "$WAITED" --argjson dur "$DUR" --argjson mid "$(num "$mid")" --arg tag "${RUN_TAG:-}" \
     --argjson srv_p50 "$(num "$srv_p50")" --argjson srv_p99 "$(num "$srv_p99")" --argjson wire "$(num "$wire")" \
     --argjson held "$(num "${HELD:-}")" \
     '{sc:$sc, name:$name, kind:$kind, rep:$rep, att:$att, rate:$rate, conns:$conns, rc:$rc, dur:$dur,
       wall:$wall, cpu:$cpu, rss_kb:$rss_kb, srv_reqs:$srv_reqs, srv_conns:$srv_conns, srv_cpu:$srv_cpu,
       others:$others, steal:$steal, noisy:($noisy==1), load1:$load1, waited:$waited,
       tag:$tag, active_mid:$mid, srv_p50_ms:$srv_p50, srv_p99_ms:$srv_p99, wire_p50_ms:$wire, held_rate:$held} + $p' >> "$RESULTS"
  log "$(tail -1 "$RESULTS" | jq -r '"\(.sc) \(.name) rate=\(.rate) conns=\(.conns) rep\(.rep)/\(.att) rc=\(.rc) count=\(.count) rps=\(.rps) p50=\(.p50_ms)ms p99=\(.p99_ms)ms server=\(.srv_reqs) cpu=\(.cpu)s rss=\(.rss_kb)KB others=\(.others)\(if .noisy then " NOISY" else "" end)"')"
  sleep "$COOLDOWN"
  [ "$noisy" = 0 ]
}

# last_rps NAME SC REP: the rate the last run of NAME in SC round REP achieved.
last_rps() {
  jq -s -r --arg n "$1" --arg sc "$2" --argjson rep "$3" \
    '[.[] | select(.sc==$sc and .name==$n and .rep==$rep and .rate==0)] | last | .rps // 0' "$RESULTS"
}

# highest_held NAME REP: the highest rate NAME held: scenario maxrate's when
# it ran, else the highest of round REP's open-loop runs that held (nginx
# counted at least HOLD of the offered rate) with nothing dropped; 0: none.
highest_held() {
  jq -s -r --arg n "$1" --argjson rep "$2" --argjson h "$HOLD" '
    ([.[] | select(.sc=="maxrate" and .name==$n and .rps != null and .rps >= $h*.rate and .srv_reqs/.dur >= $h*.rate) | .rate] | max) as $c
    | if $c != null then $c else
      ([.[] | select(.sc=="open" and .name==$n and .rep==$rep and .rate > 0 and .tag != "overload"
                     and (.dropped // 0) == 0 and .srv_reqs/.dur >= $h*.rate) | .rate] | max // 0) end' "$RESULTS"
}

# ------------------------------------------------------------------ websocket
# scenario_websocket: `loadprobe target` on a free loopback port (pinned as nginx
# is), then the round-trip benchmark, compiled first, pinned as a generator is,
# against its /ws echo. The output goes to RUN/websocket.txt for the report.
scenario_websocket() {
  local bin=${BIN[${LP_NAMES[0]}]} tlog="$RUN/ws-target.log" addr="" i
  "${SRV_PIN[@]}" "$bin" target --listen=127.0.0.1:0 > "$tlog" 2>&1 &
  WS_PID=$!
  for i in $(seq 1 50); do
    addr=$(grep -o 'address=127\.0\.0\.1:[0-9]*' "$tlog" | head -1 | cut -d= -f2)
    [ -n "$addr" ] && break
    sleep 0.1
  done
  if [ -z "$addr" ]; then log "loadprobe target did not start (see $tlog)"; cleanup; return; fi
  (cd "$ROOT" && go test -c -o "$RUN/prober.test" ./prober) || { log "go test -c ./prober failed"; cleanup; return; }
  log "WebSocket round trips against ws://$addr/ws"
  LOADPROBE_BENCH_WS_URL="ws://$addr/ws" timeout 120 "${GEN_PIN[@]}" env GOMAXPROCS="$GEN_CPUS" \
    "$RUN/prober.test" -test.run '^$' -test.bench 'WebSocketRoundTrips' -test.benchtime=1x > "$RUN/websocket.txt" 2>&1 \
    || log "the WebSocket benchmark failed (see $RUN/websocket.txt)"
  kill "$WS_PID" 2>/dev/null; wait "$WS_PID" 2>/dev/null; WS_PID=""
}

# scenario_openbench: BenchmarkOpenLoopCPU (closed, then open loop CPU per
# request in one process, then closed-1: the closed loop at one connection)
# against nginx, compiled first, pinned as a
# generator is; the output goes to RUN/openbench.txt for the report.
scenario_openbench() {
  (cd "$ROOT" && go test -c -o "$RUN/prober.test" ./prober) || { log "go test -c ./prober failed"; return; }
  drained; wait_quiet
  log "BenchmarkOpenLoopCPU against $NGX_URL"
  LOADPROBE_BENCH_HTTP_URL=$NGX_URL timeout 120 "${GEN_PIN[@]}" env GOMAXPROCS="$GEN_CPUS" \
    "$RUN/prober.test" -test.run '^$' -test.bench 'OpenLoopCPU' -test.benchtime=1x > "$RUN/openbench.txt" 2>&1 \
    || log "the open-loop benchmark failed (see $RUN/openbench.txt)"
}

# held NAME RATE: did the last maxrate run of NAME at RATE hold the rate?
held() {
  jq -s -e --arg n "$1" --argjson r "$2" --argjson h "$HOLD" \
    '[.[] | select(.sc=="maxrate" and .name==$n and .rate==$r)] | last
     | (.rps != null and .rps >= $h*$r and .srv_reqs/.dur >= $h*$r)' "$RESULTS" >/dev/null
}

# ================================================================== main
install_missing
command -v go >/dev/null || die "go is not installed"

if [ -n "${LOADPROBE_BINS:-}" ]; then
  for nb in $LOADPROBE_BINS; do
    n=${nb%%=*}; b=${nb#*=}
    [ -x "$b" ] || die "$b is not an executable"
    KIND[$n]=loadprobe; BIN[$n]=$b; LP_NAMES+=("$n")
  done
else
  log "building loadprobe"
  (cd "$ROOT" && CGO_ENABLED=0 go build -trimpath -o "$RUN/loadprobe" .) || die "go build failed"
  KIND[loadprobe]=loadprobe; BIN[loadprobe]="$RUN/loadprobe"; LP_NAMES=(loadprobe)
fi
KIND[wrk]=wrk; KIND[hey]=hey; KIND[vegeta]=vegeta; KIND[ghz]=ghz; KIND[h2load]=h2load; KIND[h2load-m10]=h2load
NAMES_A=($PEERS_CLOSED "${LP_NAMES[@]}")
NAMES_B=($PEERS_RATE "${LP_NAMES[@]}")

{
  echo "date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine=$NCPU CPUs ($(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)), $(awk '/MemTotal/{printf "%.1f GiB", $2/1048576}' /proc/meminfo), kernel $(uname -r)"
  echo "pin=$PIN"
  echo "go=$(go env GOVERSION)"
  echo "nginx=$(nginx -v 2>&1 | sed 's#.*/##')"
  echo "wrk=$(wrk -v 2>&1 | head -1 | awk '{print $2}')"
  echo "hey=$(dpkg-query -W -f='${Version}' hey 2>/dev/null || echo '?')"
  echo "vegeta=$VEGETA_VERSION"
  echo "ghz=$GHZ_VERSION"
  echo "h2load=$(h2load --version 2>/dev/null | head -1 | awk '{print $2}')"
  for n in "${LP_NAMES[@]}"; do
    if [ -n "${LOADPROBE_BINS:-}" ]; then echo "lp_$n=${BIN[$n]}"
    else echo "lp_$n=built from the tree at $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo '?')"; fi
  done
  echo "settings=reps=$REPS dur=${DUR}s conns=$CONNS timeout=${TIMEOUT}s rates=[$RATES] maxrate=$RATE_START+$RATE_STEP..$RATE_LIMIT hold=$HOLD refine=$REFINE open=[$OPEN_RATES]+${OPEN_FRACTION}xclosed latency=${LAT_CONNS}conns/${LAT_DELAY_MS}ms scale=[$SCALE_CONNS]"
  echo "noise=quiet_wait=${QUIET_WAIT}s quiet_cores=$QUIET_CORES noise_cores=$NOISE_CORES max_attempts=$MAX_ATTEMPTS"
  echo "loadavg_start=$(cut -d' ' -f1-3 /proc/loadavg)"
} > "$RUN/meta.txt"

T0=$(date +%s)
GOBENCH="$RUN/gobench.txt"
for sc in $SCENARIOS; do
  case $sc in
    gobench)
      log "go test -bench (the per-request cost of recording an attempt)"
      (cd "$ROOT" && go test -run '^$' -bench 'RecordAttempt|StepRecorderRecord|ScriptedFlow|HTTP3Attempt' -benchmem ./prober \
        && go test -run '^$' -bench 'LiveAttempt' -benchmem ./collector) > "$GOBENCH" 2>&1 \
        || log "go test -bench failed (see $GOBENCH)" ;;
    throughput|rate|maxrate|open|conns|templated) use_nginx ;;&
    h2|h2streams) use_nginx h2 ;;&
    throughput)
      for rep in $(seq 1 "$REPS"); do for n in "${NAMES_A[@]}"; do
        run_one throughput "$n" closed "$CONNS" 0 "$rep"
      done; done ;;
    rate)
      for r in $RATES; do for rep in $(seq 1 "$REPS"); do for n in "${NAMES_B[@]}"; do
        run_one rate "$n" rate "$CONNS" "$r" "$rep"
      done; done; done ;;
    maxrate)
      for n in "${NAMES_B[@]}"; do
        lo=0; hi=0; r=$RATE_START
        while [ "$r" -le "$RATE_LIMIT" ]; do
          run_one maxrate "$n" rate "$CONNS" "$r" 1
          if held "$n" "$r"; then lo=$r; else hi=$r; break; fi
          r=$(( r + RATE_STEP ))
        done
        # Narrow down between the last rate held and the first one not held.
        i=0
        while [ "$hi" -gt 0 ] && [ "$i" -lt "$REFINE" ]; do
          r=$(( (lo + hi) / 2000 * 1000 ))
          { [ "$r" -le "$lo" ] || [ "$r" -ge "$hi" ]; } && break
          run_one maxrate "$n" rate "$CONNS" "$r" 1
          if held "$n" "$r"; then lo=$r; else hi=$r; fi
          i=$(( i + 1 ))
        done
      done ;;
    open)
      # Each round: the closed loop (the reference), then the open loop at
      # OPEN_RATES and at OPEN_FRACTION of that round's closed-loop rate.
      for rep in $(seq 1 "$REPS"); do for n in "${LP_NAMES[@]}"; do
        RUN_TAG=reference run_one open "$n" closed "$CONNS" 0 "$rep"
        for r in $OPEN_RATES; do
          RUN_TAG=fixed CAPTURE_RUN=$CAPTURE run_one open "$n" rate "$CONNS" "$r" "$rep"
        done
        r=$(awk -v x="$(last_rps "$n" open "$rep")" -v f="$OPEN_FRACTION" 'BEGIN{printf "%d", int(x * f / 1000) * 1000}')
        if [ "$r" -gt 0 ]; then RUN_TAG=fraction run_one open "$n" rate "$CONNS" "$r" "$rep"
        else log "no closed-loop rate in round $rep: no open-loop run at $OPEN_FRACTION of it"; fi
        top=$(highest_held "$n" "$rep")
        r=$(awk -v x="$top" -v f="$OVERLOAD_FACTOR" 'BEGIN{printf "%d", int(x * f / 1000) * 1000}')
        if [ "$r" -gt 0 ]; then HELD=$top RUN_TAG=overload run_one open "$n" rate "$CONNS" "$r" "$rep"
        else log "no rate held in round $rep: no overload run"; fi
      done; done
      scenario_openbench ;;
    latency)
      use_delaytarget
      for rep in $(seq 1 "$REPS"); do for n in wrk "${LP_NAMES[@]}"; do
        run_one latency "$n" closed "$LAT_CONNS" 0 "$rep"
      done; done ;;
    https)
      use_nginx tls
      for rep in $(seq 1 "$REPS"); do for n in wrk "${LP_NAMES[@]}"; do
        run_one https "$n" closed "$CONNS" 0 "$rep"
      done; done ;;
    h2)
      for rep in $(seq 1 "$REPS"); do for n in wrk h2load "${LP_NAMES[@]}"; do
        run_one h2 "$n" closed "$CONNS" 0 "$rep"
      done; done ;;
    h2streams)
      lp=${LP_NAMES[0]}
      KIND[$lp-s10]=loadprobe; BIN[$lp-s10]=${BIN[$lp]}
      for rep in $(seq 1 "$REPS"); do for n in h2load-m10 "$lp-s10"; do
        run_one h2streams "$n" closed "$CONNS" 0 "$rep"
      done; done ;;
    conns)
      for c in $SCALE_CONNS; do for rep in $(seq 1 "$REPS"); do for n in wrk "${LP_NAMES[@]}"; do
        run_one conns "$n" closed "$c" 0 "$rep"
      done; done; done ;;
    websocket) scenario_websocket ;;
    grpc)
      use_grpctarget
      for rep in $(seq 1 "$REPS"); do for n in ghz h2load "${LP_NAMES[@]}"; do
        run_one grpc "$n" closed "$CONNS" 0 "$rep"
      done; done ;;
    templated)
      lp=${LP_NAMES[0]}
      for v in body template; do KIND[$lp-$v]=loadprobe; BIN[$lp-$v]=${BIN[$lp]}; done
      for rep in $(seq 1 "$REPS"); do for n in "$lp-body" "$lp-template"; do
        run_one templated "$n" closed "$CONNS" 0 "$rep"
      done; done ;;
    *) log "unknown scenario $sc" ;;
  esac
done
T1=$(date +%s)
cleanup
echo "loadavg_end=$(cut -d' ' -f1-3 /proc/loadavg)" >> "$RUN/meta.txt"
echo "elapsed_s=$(( T1 - T0 ))" >> "$RUN/meta.txt"

# ================================================================== report
"$HERE/report.sh" "$RUN" > "$RUN/RESULTS.md" || die "report failed"
[ "$OUT_MD" = /dev/null ] || cp "$RUN/RESULTS.md" "$OUT_MD"
cat "$RUN/RESULTS.md"
log "done in $(( T1 - T0 ))s; raw data in ${RUN#"$ROOT"/}/"
