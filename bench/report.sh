#!/usr/bin/env bash
# report.sh RUN_DIR - turn RUN_DIR/results.jsonl, meta.txt and gobench.txt
# (written by bench.sh) into Markdown. Can be rerun on an old run folder.
set -u -o pipefail
RUN=$1
META="$RUN/meta.txt"
meta() { awk -F= -v k="$1" '$1==k{sub(/^[^=]*=/,""); print; exit}' "$META"; }

cat <<EOF
# loadprobe beside wrk, hey and vegeta (and ghz, h2load for gRPC)

Written by \`make bench\` (\`bench/bench.sh\`); raw outputs, exact command lines and
\`/usr/bin/time -v\` data were in \`bench/runs/$(basename "$RUN")/\`. Loopback only: one
machine runs both nginx and the generator.

| | |
|---|---|
| date (UTC) | $(meta date_utc) |
| machine | $(meta machine) |
| CPU pinning | $( [ "$(meta pin)" = 1 ] && echo "nginx's one worker on CPU 0, the generator on CPU 1 (wrk -t1; Go generators with GOMAXPROCS=1)" || echo "none: nginx and the generator float over all CPUs") |
| target | nginx $(meta nginx): 1 worker, access_log off, keep-alive, \`return 200 'ok'\` |
| versions | wrk $(meta wrk), hey $(meta hey), vegeta $(meta vegeta), ghz $(meta ghz), h2load $(meta h2load), $(meta go); $(grep '^lp_' "$META" | sed 's/^lp_//; s/=/: /' | paste -sd';' | sed 's/;/; /g') |
| settings | $(meta settings) |
| noise gate | $(meta noise) |
| load average | start $(meta loadavg_start), end $(meta loadavg_end) |
| wall time | $(meta elapsed_s) s |

EOF

# The helpers every table's jq program uses: medians with their range,
# rounding, the rows' tool names in order, others' load, nginx-counted rate.
JQ_LIB='
def med: sort | if length == 0 then null elif length % 2 == 1 then .[(length - 1) / 2] else (.[length/2 - 1] + .[length/2]) / 2 end;
def r(d): if . == null then null else (. * pow(10; d) | round) / pow(10; d) end;
def s(d): if . == null then "n/a" else r(d) | tostring end;
def mm(d): map(select(. != null)) | if length == 0 then "n/a"
  else (med | s(d)) + (if min != max then " (" + (min | s(d)) + "–" + (max | s(d)) + ")" else "" end) end;
def names(sc): [.[] | select(.sc == sc) | .name] | reduce .[] as $n ([]; if index([$n]) then . else . + [$n] end);
def cores: .others / (.wall // .dur);
def nrps: if .srv_reqs == null then null else .srv_reqs / .dur end;
'

jq -r -s "$JQ_LIB"'
def pct: if . == null then "n/a" else (if . >= 0 then "+" else "" end) + (r(2) | tostring) + "%" end;
def mmp: map(select(. != null)) | if length == 0 then "n/a"
  else (med | pct) + (if min != max then " (" + (min | pct) + " … " + (max | pct) + ")" else "" end) end;

# the last attempt of every (scenario, name, rate, rep)
. as $all
| ($all | map(select(.att > 1)) | length) as $repeated
| (reduce $all[] as $x ({}; .["\($x.sc)/\($x.name)/\($x.rate)/\($x.conns)/\($x.rep)"] = $x) | [.[]]) as $rows
| ($rows | map(select(.noisy)) | length) as $noisy
| ($rows | map(select(.rc != 0)) | length) as $failed

| "Figures are **median (min–max)** over the rounds; rounds are interleaved across tools, so drift",
  "hits every tool alike. *× wrk* is the median of the per-round ratios (tool ÷ wrk of the same",
  "round). *others’ load* is the CPU that processes other than the generator and nginx used",
  "during a run, in cores (0.00–0.10 is a clean run).",
  "",
  "Noise: \($rows | length) measured runs kept, \($repeated) attempt(s) repeated because others used more",
  "than the noise threshold, \($noisy) kept run(s) still noisy, \($failed) run(s) with a non-zero exit code;",
  "others’ load over the kept runs: \([$rows[] | cores] | mm(2)) cores.",
  "Ratios between tools within one run are more trustworthy than absolute figures on a shared machine.",
  "",

( ($rows | map(select(.sc == "throughput"))) as $A
| if ($A | length) > 0 then
  ($A | map(select(.name == "wrk")) | map({key: (.rep | tostring), value: .}) | from_entries) as $wrk
  | "## A) Closed loop: \($A[0].conns) keep-alive connections, \($A[0].dur) s, nginx `/`",
    "",
    "| tool | req/s (tool-reported) | req/s (nginx-counted) | req/s × wrk | generator CPU-s | requests per generator CPU-s | per CPU-s × wrk | peak RSS MiB | tool’s count − nginx’s count | errors | nginx worker CPU-s | others’ load, cores |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ( $A | names("throughput")[] as $n
      | [$A[] | select(.name == $n)] as $x
      | "| \($n) | \([$x[].rps] | mm(0)) | \([$x[] | nrps] | mm(0)) | \([$x[] | select($wrk[.rep | tostring] != null) | .rps / $wrk[.rep | tostring].rps] | mm(2)) | \([$x[].cpu] | mm(2)) | \([$x[] | .srv_reqs / .cpu] | mm(0)) | \([$x[] | select($wrk[.rep | tostring] != null) | (.srv_reqs / .cpu) / ($wrk[.rep | tostring] | .srv_reqs / .cpu)] | mm(2)) | \([$x[].rss_kb / 1024] | mm(1)) | \([$x[] | .count - .srv_reqs] | mm(0)) | \([$x[].errors] | mm(0)) | \([$x[].srv_cpu] | mm(2)) | \([$x[] | cores] | mm(2)) |" ),
    "",
    "*nginx-counted* = requests nginx served during the run (stub_status) ÷ \($A[0].dur) s. *Requests per generator CPU-s* =",
    "those requests ÷ the generator’s user+sys CPU seconds (`/usr/bin/time -v`). *Tool’s count − nginx’s count*:",
    "requests the tool reports minus requests nginx served; wrk and hey leave out the requests still under way",
    "when they stop, loadprobe counts every attempt (attempts = outcomes), so 0 is exact.",
    ""
  else empty end ),

( ($rows | map(select(.sc == "rate"))) as $B
| if ($B | length) > 0 then
  "## B) Open loop: rate accuracy, \($B[0].dur) s, nginx `/`",
  "",
  "| offered req/s | tool | achieved req/s (tool-reported) | error | achieved req/s (nginx-counted) | error | p99 ms | dropped | errors | generator CPU-s | others’ load, cores |",
  "|---|---|---|---|---|---|---|---|---|---|---|",
  ( ($B | map(.rate) | unique)[] as $r
    | ($B | map(select(.rate == $r)) | names("rate"))[] as $n
    | [$B[] | select(.rate == $r and .name == $n)] as $x
    | "| \($r) | \($n) | \([$x[].rps] | mm(1)) | \([$x[] | select(.rps != null) | (.rps / $r - 1) * 100] | mmp) | \([$x[] | nrps] | mm(1)) | \([$x[] | (nrps / $r - 1) * 100] | mmp) | \([$x[].p99_ms] | mm(2)) | \([$x[].dropped] | mm(0)) | \([$x[].errors] | mm(0)) | \([$x[].cpu] | mm(2)) | \([$x[] | cores] | mm(2)) |" ),
  "",
  "*achieved (tool-reported)*: loadprobe’s step `throughput` (responses inside the step’s window ÷ its length);",
  "vegeta’s `throughput` (successful responses ÷ (attack + wait for the last responses)). loadprobe measures",
  "latency from the intended send time (coordinated omission corrected); vegeta from the actual send time.",
  ""
  else empty end ),

( ($rows | map(select(.sc == "maxrate"))) as $C
| if ($C | length) > 0 then
  "## C) Open loop: the highest rate each holds (\($C[0].dur) s per rate)",
  "",
  "A rate is held when the achieved rate, as the tool reports it and as nginx counts it, is at least",
  "99% of the offered one. Rates go up by a fixed step until one is not held, then the interval",
  "between the last rate held and that one is halved (twice by default). One run per rate.",
  "",
  "| tool | offered req/s | achieved (tool-reported) | achieved (nginx-counted) | p99 ms | dropped | errors | generator CPU-s | held | others’ load, cores |",
  "|---|---|---|---|---|---|---|---|---|---|",
  ( $C | names("maxrate")[] as $n
    | $C | map(select(.name == $n)) | sort_by(.rate)[]
    | "| \(.name) | \(.rate) | \(.rps | s(0)) (\(if .rps then (.rps / .rate - 1) * 100 | pct else "n/a" end)) | \(nrps | s(0)) (\((nrps / .rate - 1) * 100 | pct)) | \(.p99_ms | s(2)) | \(.dropped // "n/a") | \(.errors // "n/a") | \(.cpu) | \(if (.rps // 0) >= 0.99 * .rate and nrps >= 0.99 * .rate then "yes" else "**no**" end) | \(cores | s(2)) |" ),
  "",
  ( $C | names("maxrate")[] as $n
    | ($C | map(select(.name == $n and (.rps // 0) >= 0.99 * .rate and nrps >= 0.99 * .rate)) | map(.rate) | max) as $h
    | "- highest rate held by \($n): \(if $h == null then "none of the rates tried" else "\($h) req/s" end)" ),
  ""
  else empty end ),

( ($rows | map(select(.sc == "templated"))) as $E
| if ($E | length) > 0 then
  ($E | map(select(.name | endswith("-body"))) | map({key: (.rep | tostring), value: .}) | from_entries) as $fixed
  | "## D) Request templates: a templated body against the same body fixed (\($E[0].conns) connections, \($E[0].dur) s)",
    "",
    "| row | body | req/s (tool-reported) | req/s (nginx-counted) | × fixed body | generator CPU-s | errors |",
    "|---|---|---|---|---|---|---|",
    ( $E | names("templated")[] as $n
      | [$E[] | select(.name == $n)] as $x
      | "| \($n) | \(if ($n | endswith("-body")) then "`{\"id\": 123456, \"n\": 789}`" else "`{\"id\": {{index}}, \"n\": {{random_int 1 999}}}`" end) | \([$x[].rps] | mm(0)) | \([$x[] | nrps] | mm(0)) | \([$x[] | select($fixed[.rep | tostring] != null) | .rps / $fixed[.rep | tostring].rps] | mm(3)) | \([$x[].cpu] | mm(2)) | \([$x[].errors] | mm(0)) |" ),
    "",
    "*× fixed body* is the median of the per-round ratios (templated ÷ fixed of the same round): the goal is ≥ 0.9.",
    ""
  else empty end ),

( ($rows | map(select(.sc == "grpc"))) as $G
| if ($G | length) > 0 then
  def per(x): if (x.cpu // 0) > 0 and x.count != null then x.count / x.cpu else null end;
  def peerof(x; n): x as $x | $G | map(select(.name == n and .rep == $x.rep)) | last;
  "## K) gRPC: unary calls, \($G[0].conns) in flight on one HTTP/2 connection, \($G[0].dur) s, the demo target’s `Noop`",
  "",
  "| tool | RPCs/s (tool-reported) | generator CPU-s | RPCs per generator CPU-s | per CPU-s × ghz | per CPU-s × h2load | p99 ms | peak RSS MiB | errors | server CPU-s | others’ load, cores |",
  "|---|---|---|---|---|---|---|---|---|---|---|",
  ( $G | names("grpc")[] as $n
    | [$G[] | select(.name == $n)] as $x
    | "| \($n) | \([$x[].rps] | mm(0)) | \([$x[].cpu] | mm(2)) | \([$x[] | per(.)] | mm(0)) | \([$x[] | peerof(.; "ghz") as $p | select($p != null and per($p) != null) | per(.) / per($p)] | mm(2)) | \([$x[] | peerof(.; "h2load") as $p | select($p != null and per($p) != null) | per(.) / per($p)] | mm(2)) | \([$x[].p99_ms] | mm(2)) | \([$x[].rss_kb / 1024] | mm(1)) | \([$x[].errors] | mm(0)) | \([$x[].srv_cpu] | mm(2)) | \([$x[] | cores] | mm(2)) |" ),
  "",
  "The server is `loadprobe target --grpc-listen` (grpc-go) on CPU 0, the generator on CPU 1. *RPCs per",
  "generator CPU-s* = the calls the tool completed ÷ its user+sys CPU seconds (`/usr/bin/time -v`, the",
  "whole process: loadprobe’s includes its start, the settle and the step’s warm-up). ghz (grpc-go, its",
  "messages built per call) and loadprobe take the method from `demo/target/target.protoset`; h2load",
  "posts the 5-byte framed empty message and reads the HTTP/2 response, not its gRPC trailers. The goal:",
  "≥ 2 × ghz and ≥ 0.5 × h2load per CPU-second.",
  ""
  else empty end )
' "$RUN/results.jsonl"

# Issue 11's scenarios: open loop against the same build's closed loop,
# closed-loop latency overhead, https and connection scale beside wrk.
jq -r -s "$JQ_LIB"'
def usreq: if (.srv_reqs // 0) > 0 then .cpu / .srv_reqs * 1e6 else null end;
def peer(rows; x): x as $x | rows | map(select(.name == "wrk" and .rep == $x.rep and .conns == $x.conns)) | last;

(reduce .[] as $x ({}; .["\($x.sc)/\($x.name)/\($x.rate)/\($x.conns)/\($x.rep)"] = $x) | [.[]]) as $rows

| ( ($rows | map(select(.sc == "open"))) as $O
  | if ($O | length) > 0 then
    "## E) Open loop against the same build’s closed loop (\($O[0].dur) s per run, nginx `/`)",
    "",
    "Every round runs loadprobe’s closed loop (\($O[0].conns) connections) first: its rate is the reference, and the",
    "open loop runs at fixed rates and at a fraction of that round’s closed-loop rate. *nginx p50 (wire)*: the",
    "median time from a request’s data segment to its response’s, captured on `lo` during the run (tcpdump on",
    "nginx’s CPU): the server’s own latency, without either side’s client. loadprobe’s latency runs from the",
    "*intended* send time. *CPU µs per request*: generator user+sys ÷ requests nginx served; *× closed*: ÷ the",
    "closed loop’s of the same round.",
    "",
    "| tool | run | offered req/s | × closed-loop rate | achieved req/s (tool / nginx) | achieved ÷ offered (nginx) | dropped | p50 ms | nginx p50 ms (wire) | p50 − nginx p50 ms | p99 ms | CPU µs per request | × closed | peak RSS MiB | others’ load, cores |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ( $O | names("open")[] as $n
      | ($O | map(select(.name == $n and .tag == "reference"))) as $ref
      | def ref(x): (x | .rep) as $rep | $ref | map(select(.rep == $rep)) | last;
        ( "| \($n) | closed loop, \($ref[0].conns) conns | – | 1 | \([$ref[].rps] | mm(0)) / \([$ref[] | nrps] | mm(0)) | – | – | \([$ref[].p50_ms] | mm(3)) | – | – | \([$ref[].p99_ms] | mm(2)) | \([$ref[] | usreq] | mm(2)) | 1 | \([$ref[].rss_kb / 1024] | mm(1)) | \([$ref[] | cores] | mm(2)) |" ),
        ( ($O | map(select(.name == $n and .tag == "fixed")) | map(.rate) | unique)[] as $r
          | [$O[] | select(.name == $n and .tag == "fixed" and .rate == $r)] as $x
          | "| \($n) | open, fixed rate | \($r) | \([$x[] | select(ref(.) != null) | .rate / ref(.).rps] | mm(2)) | \([$x[].rps] | mm(1)) / \([$x[] | nrps] | mm(1)) | \([$x[] | nrps / .rate] | mm(4)) | \([$x[].dropped] | mm(0)) | \([$x[].p50_ms] | mm(3)) | \([$x[].wire_p50_ms] | mm(3)) | \([$x[] | select(.wire_p50_ms != null and .p50_ms != null) | .p50_ms - .wire_p50_ms] | mm(3)) | \([$x[].p99_ms] | mm(2)) | \([$x[] | usreq] | mm(2)) | \([$x[] | select(ref(.) != null) | usreq / (ref(.) | usreq)] | mm(2)) | \([$x[].rss_kb / 1024] | mm(1)) | \([$x[] | cores] | mm(2)) |" ),
        ( [$O[] | select(.name == $n and .tag == "fraction")] as $x
          | if ($x | length) > 0 then
            "| \($n) | open, \($x[0] | if ref(.) then (.rate / ref(.).rps * 100 | floor | tostring) + "%" else "" end) of the round’s closed loop | \([$x[].rate] | mm(0)) | \([$x[] | select(ref(.) != null) | .rate / ref(.).rps] | mm(2)) | \([$x[].rps] | mm(1)) / \([$x[] | nrps] | mm(1)) | \([$x[] | nrps / .rate] | mm(4)) | \([$x[].dropped] | mm(0)) | \([$x[].p50_ms] | mm(3)) | – | – | \([$x[].p99_ms] | mm(2)) | \([$x[] | usreq] | mm(2)) | \([$x[] | select(ref(.) != null) | usreq / (ref(.) | usreq)] | mm(2)) | \([$x[].rss_kb / 1024] | mm(1)) | \([$x[] | cores] | mm(2)) |"
            else empty end ) ),
    "",
    ( [$O[] | select(.tag == "overload")] as $V
      | if ($V | length) > 0 then
        "**Overload**: each round offers \($V[0] | .rate / .held_rate | s(2))× the highest rate held (scenario C’s when it ran, else the round’s",
        "highest open-loop rate held with no drop). Goal: achieved (nginx-counted) ≥ 0.9× the highest rate held, the",
        "rest dropped and counted, the step generator-limited (`generator_cpu_ratio` at or above the 0.9 budget).",
        "",
        "| tool | round | highest rate held | offered req/s | achieved req/s (tool / nginx) | achieved ÷ highest held (nginx) | dropped | p50 ms | p99 ms | generator CPU ratio | others’ load, cores |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        ( $V | sort_by(.name, .rep)[]
          | "| \(.name) | \(.rep) | \(.held_rate) | \(.rate) | \(.rps | s(0)) / \(nrps | s(0)) | \(nrps / .held_rate | s(3)) | \(.dropped // "n/a") | \(.p50_ms | s(2)) | \(.p99_ms | s(2)) | \(.gen_cpu | s(3)) | \(cores | s(2)) |" ),
        ""
        else empty end )
  else empty end ),

( ($rows | map(select(.sc == "latency"))) as $L
  | if ($L | length) > 0 then
    "## F) Closed-loop latency overhead: \($L[0].conns) connections, a target that answers after a fixed delay",
    "",
    "`bench/delaytarget` answers `/delay?ms=N` and measures its own handler time (its sleep’s timer slack",
    "included), so *overhead* = the tool’s p99 − the server’s p99 of the same run: what the generator adds.",
    "",
    "| tool | req/s | p50 ms | server p50 ms | p99 ms | server p99 ms | p99 overhead ms | × wrk’s overhead | others’ load, cores |",
    "|---|---|---|---|---|---|---|---|---|",
    ( $L | names("latency")[] as $n | [$L[] | select(.name == $n)] as $x
      | "| \($n) | \([$x[].rps] | mm(0)) | \([$x[].p50_ms] | mm(3)) | \([$x[].srv_p50_ms] | mm(3)) | \([$x[].p99_ms] | mm(3)) | \([$x[].srv_p99_ms] | mm(3)) | \([$x[] | .p99_ms - .srv_p99_ms] | mm(3)) | \([$x[] | peer($L; .) as $w | select($w != null and ($w.p99_ms - $w.srv_p99_ms) > 0) | (.p99_ms - .srv_p99_ms) / ($w.p99_ms - $w.srv_p99_ms)] | mm(2)) | \([$x[] | cores] | mm(2)) |" ),
    ""
  else empty end ),

( ["https", "conns"][] as $sc
  | ($rows | map(select(.sc == $sc))) as $H
  | if ($H | length) > 0 then
    (if $sc == "https" then
      "## G) https keep-alive: \($H[0].conns) connections, nginx over TLS (a self-signed certificate made for the run)",
      "",
      "nginx offers HTTP/1.1 only by ALPN: loadprobe with default settings (its ALPN offers h2 and http/1.1) and the",
      "certificate as `tls_config.ca_file` (verified, not skipped)."
     else
      "## H) Connection scale: closed loop at \($H | map(.conns) | unique | map(tostring) | join(" and ")) keep-alive connections"
     end),
    "",
    (if $sc == "conns" then "*open mid-run*: the connections nginx held halfway through the run (stub_status, its own poll left out).\n" else empty end),
    "| tool | connections | req/s | req/s × wrk | requests per generator CPU-s | per CPU-s × wrk | peak RSS MiB | open mid-run | errors | others’ load, cores |",
    "|---|---|---|---|---|---|---|---|---|---|",
    ( ($H | map(.conns) | unique)[] as $c
      | ($H | map(select(.conns == $c)) | names($sc))[] as $n
      | [$H[] | select(.name == $n and .conns == $c)] as $x
      | "| \($n) | \($c) | \([$x[] | nrps] | mm(0)) | \([$x[] | peer($H; .) as $w | select($w != null) | nrps / ($w | nrps)] | mm(2)) | \([$x[] | .srv_reqs / .cpu] | mm(0)) | \([$x[] | peer($H; .) as $w | select($w != null) | (.srv_reqs / .cpu) / ($w.srv_reqs / $w.cpu)] | mm(2)) | \([$x[].rss_kb / 1024] | mm(1)) | \([$x[].active_mid] | mm(0)) | \([$x[].errors] | mm(0)) | \([$x[] | cores] | mm(2)) |" ),
    "",
    "*req/s* as nginx counted them (stub_status) ÷ the run’s length.",
    ""
  else empty end )
' "$RUN/results.jsonl"

# Issue 26's HTTP/2 rows: loadprobe beside wrk and h2load against nginx
# offering h2 by ALPN, each ratio to the peer of the same round.
jq -r -s "$JQ_LIB"'
def cpus: if .cpu > 0 then .srv_reqs / .cpu else null end;
def peer(rows; x; name): x as $x | rows | map(select(.name == name and .rep == $x.rep)) | last;
def ratio(rows; x; name; f): peer(rows; x; name) as $p | if $p == null or ($p | f) == null or ($p | f) == 0 then null else (x | f) / ($p | f) end;

(reduce .[] as $x ({}; .["\($x.sc)/\($x.name)/\($x.rate)/\($x.conns)/\($x.rep)"] = $x) | [.[]]) as $rows
| [["h2", "h2load"], ["h2streams", "h2load-m10"]][] as [$sc, $ref]
| ($rows | map(select(.sc == $sc))) as $H
| if ($H | length) > 0 then
  (if $sc == "h2" then
    "## K) HTTP/2: \($H[0].conns) connections to nginx offering h2 and http/1.1 by ALPN",
    "",
    "wrk speaks HTTP/1.1 (it offers no ALPN); h2load `-c\($H[0].conns) -m1` and loadprobe with default settings speak",
    "HTTP/2, one stream per connection."
   else
    "## L) HTTP/2, 10 streams per connection: h2load `-c\($H[0].conns / 10 | floor) -m10` beside loadprobe at concurrency \($H[0].conns)",
    "",
    "loadprobe with `http2: {streams_per_connection: 10}`: \($H[0].conns) workers over \($H[0].conns / 10 | floor) connections."
   end),
  "",
  "| tool | req/s | × \($ref) | requests per generator CPU-s | per CPU-s × \($ref) | req/s × wrk | peak RSS MiB | errors | others’ load, cores |",
  "|---|---|---|---|---|---|---|---|---|",
  ( $H | names($sc)[] as $n | [$H[] | select(.name == $n)] as $x
    | "| \($n) | \([$x[] | nrps] | mm(0)) | \([$x[] | ratio($H; .; $ref; nrps)] | mm(2)) | \([$x[] | cpus] | mm(0)) | \([$x[] | ratio($H; .; $ref; cpus)] | mm(2)) | \([$x[] | ratio($H; .; "wrk"; nrps)] | mm(2)) | \([$x[].rss_kb / 1024] | mm(1)) | \([$x[].errors] | mm(0)) | \([$x[] | cores] | mm(2)) |" ),
  "",
  "*req/s* as nginx counted them (stub_status) ÷ the run’s length; ratios are per round, to the peer of the same round.",
  ""
else empty end
' "$RUN/results.jsonl"

if [ -s "$RUN/gobench.txt" ]; then
  cat <<EOF
## I) The per-request cost of recording an attempt (\`go test -bench\`)

\`BenchmarkRecordAttempt\` (prober) is what the engine does for every attempt besides the request
itself: \`stats\` = the step recorder only (HdrHistogram, per-second timeline, codes);
\`stats+live\` = that and the live Prometheus metrics (counters, the classic+native duration
histogram), i.e. \`engine.observe\`; \`closed-loop\` = all the bookkeeping around one request in a
closed-loop worker (the in-flight gauge up and down, the clock read, \`observe\`).
\`BenchmarkStepRecorderRecord\` and \`BenchmarkLiveAttempt\` are the two parts on their own.
\`BenchmarkScriptedFlow\` is the shop flow (login, list, detail) against the demo target on
loopback, with templates and captures, then driven by a script on every step
(docs/scripts.md): compare their \`cpu-ns/op\`, the process's CPU per iteration.
\`BenchmarkHTTP3Attempt\` is one GET over HTTP/3 to a quic-go server in the process, through
loadprobe's path and through a bare \`http3.Transport\` loop (docs/http3.md).

\`\`\`
$(grep -E '^(goos|goarch|cpu|Benchmark|FAIL|ok|---)' "$RUN/gobench.txt")
\`\`\`
EOF
fi

if [ -s "$RUN/websocket.txt" ]; then
  cat <<EOF

## J) WebSocket: message round trips per generator CPU-second (\`go test -bench\`)

\`BenchmarkWebSocketRoundTrips\` against \`loadprobe target\`'s \`/ws\` echo on the server's core,
8 sessions for 3 s each: \`bare\` = a plain loop over gorilla/websocket (write, read the next
message whole, a deadline per round trip), \`loadprobe\` = a closed-loop run of a WebSocket
probe (engine, recorders, every round trip in the step figures). The ratio of their
\`roundtrips/cpu-s\` is the generator's overhead over the bare library.

\`\`\`
$(grep -E '^(goos|goarch|cpu|Benchmark|FAIL|ok|---)' "$RUN/websocket.txt")
\`\`\`
EOF
fi

if [ -s "$RUN/openbench.txt" ]; then
  cat <<EOF

## E, in one process) Open against closed loop: CPU per request (\`go test -bench\`)

\`BenchmarkOpenLoopCPU\` against the same nginx, pinned as a generator is, after scenario E's
rounds: the closed loop at 50 connections, then the open loop at 20k req/s and at 0.8× and
1.5× the rate that closed loop reached, and last the closed loop at one connection (closed-1,
idle for every answer), 3 s each, one after the other in one process. \`cpu-µs/req\` is the
process's CPU (getrusage) per request; \`x-closed\` is that over the 50-connection closed
loop's; \`sent/scheduled\` the share of the schedule sent (the rest dropped); \`p50-ms\` and
\`p99-ms\` each row's latency (the open loop's from the intended send time).

\`\`\`
$(grep -E '^(goos|goarch|cpu|Benchmark|FAIL|ok|---)' "$RUN/openbench.txt")
\`\`\`
EOF
fi
