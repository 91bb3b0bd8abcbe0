"""Every action a bot logged as acknowledged is stored as acknowledged.

Usage: check.py GAMES ARCHIVES LOG...

GAMES lists the games' names, one a line; ARCHIVES holds each finished
game's signed archive as ID.tar; each LOG is a `carcassonne bot --log` file.
For every logged action, the event of its version (stored sequence number
`acted_on + 2`: the log starts with the server's opening event) must be the
acting seat's, carry the action's request id and the very time the answer
gave: an action acknowledged and then lost in a failover, and decided again
afterwards, would be stored at another time. Each game must be finished
and no action logged twice. Prints one line of counts, or the first
problem, and exits 1 on a problem.
"""

import json
import sys
import tarfile
from pathlib import Path


def events_of(archive: Path, game_id: str) -> dict:
    with tarfile.open(archive) as tar:
        member = tar.extractfile(f"games/{game_id}/events.json")
        if member is None:
            raise ValueError(f"{archive.name} has no events.json")
        events = json.load(member)
    # Canonical proto3 JSON: 64-bit integers are strings, zeros left out.
    return {int(e["seq"]): e for e in events}


def main() -> int:
    games_file, archives, *logs = sys.argv[1:]
    names = Path(games_file).read_text().split()
    stored = {name: events_of(Path(archives) / f"{name[6:]}.tar", name[6:]) for name in names}
    seen = set()
    checked = 0
    for log in logs:
        for number, line in enumerate(Path(log).read_text().splitlines(), 1):
            where = f"{Path(log).name}:{number}"
            logged = json.loads(line)
            game, seq = logged["game"], logged["acted_on"] + 2
            if game not in stored:
                print(f"{where}: {game} is not one of the games")
                return 1
            if (game, seq) in seen:
                print(f"{where}: {game} version {seq - 1} logged twice")
                return 1
            seen.add((game, seq))
            event = stored[game].get(seq)
            if event is None:
                print(f"{where}: {game} has no event at version {seq - 1}: the acknowledged action is lost")
                return 1
            found = (int(event.get("seat", 0)), event.get("requestId", ""), int(event.get("timeMs", 0)))
            wanted = (logged["seat"], logged["request_id"], logged["time_ms"])
            if found != wanted:
                print(
                    f"{where}: {game} version {seq - 1} holds (seat, request id, time) {found}, "
                    f"but the answer acknowledged {wanted}: the acknowledged action is lost"
                )
                return 1
            checked += 1
    print(f"{checked} of {checked} acknowledged actions stored as acknowledged (seat, request id, time of the event)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
