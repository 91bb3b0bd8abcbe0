//! The schema's versioned migrations (refinery), applied at open, and the
//! durability settings a store refuses to run on.

use postgres::Client;

use crate::config::Durability;
use crate::error::{Result, StoreError};

use super::pg_error;

/// The table refinery records the applied migrations in.
const HISTORY_TABLE: &str = "carcassonne_schema_history";

/// The advisory lock two nodes opening one database at once take around
/// the migrations, so that one applies them and the other finds them done.
const MIGRATION_LOCK: i64 = 0x6361_7263_6173_7301;

/// Every migration, in version order. Never edit one that was released:
/// add the next version (refinery refuses a changed checksum).
const MIGRATIONS: &[(&str, &str)] = &[
    (
        "V1__events",
        r#"
CREATE TABLE games (
    game TEXT COLLATE "C" PRIMARY KEY,
    last_seq BIGINT NOT NULL CHECK (last_seq >= 0),
    last_hash BYTEA NOT NULL,
    created_millis BIGINT NOT NULL
);
CREATE TABLE events (
    global_position BIGINT PRIMARY KEY CHECK (global_position > 0),
    game TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL CHECK (seq > 0),
    envelope BYTEA NOT NULL,
    UNIQUE (game, seq)
);
CREATE TABLE requests (
    game TEXT COLLATE "C" NOT NULL,
    request_id TEXT COLLATE "C" NOT NULL,
    first_seq BIGINT NOT NULL,
    last_seq BIGINT NOT NULL,
    first_position BIGINT NOT NULL,
    last_position BIGINT NOT NULL,
    time_millis BIGINT NOT NULL,
    PRIMARY KEY (game, request_id)
);
CREATE TABLE position_counter (
    singleton BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (singleton),
    last_position BIGINT NOT NULL CHECK (last_position >= 0)
);
INSERT INTO position_counter (singleton, last_position) VALUES (TRUE, 0);
"#,
    ),
    (
        "V2__server_state",
        r#"
CREATE TABLE server_secrets (
    name TEXT COLLATE "C" PRIMARY KEY,
    value BYTEA NOT NULL
);
CREATE TABLE node_heartbeats (
    node TEXT COLLATE "C" PRIMARY KEY,
    alive_millis BIGINT NOT NULL
);
"#,
    ),
    (
        "V3__positions_without_a_global_lock",
        r#"
CREATE SEQUENCE event_positions AS BIGINT MINVALUE 1 CACHE 1;
SELECT setval('event_positions', last_position) FROM position_counter WHERE last_position > 0;
DROP TABLE position_counter;

-- Takes n consecutive positions for an append and returns the first. The
-- allocation lock (a session lock held for this call only) makes them
-- consecutive and makes the allocation and the position lock one step for
-- safe_position; the position lock (on minus the first position) is held
-- until the append's transaction ends.
CREATE FUNCTION take_positions(n BIGINT) RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
    first BIGINT;
BEGIN
    PERFORM pg_advisory_lock(7161132245584097282);
    BEGIN
        first := nextval('event_positions');
        IF n > 1 THEN
            PERFORM setval('event_positions', first + n - 1);
        END IF;
        PERFORM pg_advisory_xact_lock(-first);
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        PERFORM pg_advisory_unlock(7161132245584097282);
        RAISE;
    END;
    PERFORM pg_advisory_unlock(7161132245584097282);
    RETURN first;
END $$;

-- The highest position below which every position is committed or will
-- never be: what was allocated, short of the first position an open
-- transaction still holds. Read it before (never in) the statement that
-- reads events, so that statement's snapshot sees every commit it counts.
CREATE FUNCTION safe_position() RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
    allocated BIGINT;
    oldest_open BIGINT;
BEGIN
    PERFORM pg_advisory_lock(7161132245584097282);
    SELECT CASE WHEN is_called THEN last_value ELSE 0 END INTO allocated FROM event_positions;
    PERFORM pg_advisory_unlock(7161132245584097282);
    SELECT min(-((classid::BIGINT << 32) | objid::BIGINT)) INTO oldest_open
        FROM pg_locks
        WHERE locktype = 'advisory' AND objsubid = 1 AND classid::BIGINT >= 2147483648
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database());
    RETURN least(allocated, coalesce(oldest_open - 1, allocated));
END $$;

-- An append in two calls (two round trips), the envelopes being built in
-- between from the head and the positions. The first locks the game's
-- head (creating its row for a new game, so that two creators meet on
-- it), answers a request id already stored ('repeat'), checks the
-- expected version ('conflict': seq_to is the actual one) and takes the
-- positions ('append': seq_to and head_hash are the head).
CREATE FUNCTION begin_append(
    p_game TEXT, p_expected BIGINT, p_request TEXT, p_count BIGINT, p_time BIGINT,
    OUT outcome TEXT, OUT seq_from BIGINT, OUT seq_to BIGINT, OUT position_from BIGINT,
    OUT position_to BIGINT, OUT at_millis BIGINT, OUT head_hash BYTEA
) LANGUAGE plpgsql AS $$
DECLARE
    head games%ROWTYPE;
    original requests%ROWTYPE;
BEGIN
    IF p_expected = 0 THEN
        INSERT INTO games (game, last_seq, last_hash, created_millis)
            VALUES (p_game, 0, decode(repeat('00', 32), 'hex'), p_time)
            ON CONFLICT (game) DO NOTHING;
    END IF;
    SELECT * INTO head FROM games WHERE game = p_game FOR UPDATE;
    seq_to := coalesce(head.last_seq, 0);
    head_hash := coalesce(head.last_hash, decode(repeat('00', 32), 'hex'));
    IF p_request <> '' THEN
        SELECT * INTO original FROM requests WHERE game = p_game AND request_id = p_request;
        IF FOUND THEN
            outcome := 'repeat';
            seq_from := original.first_seq;
            seq_to := original.last_seq;
            position_from := original.first_position;
            position_to := original.last_position;
            at_millis := original.time_millis;
            RETURN;
        END IF;
    END IF;
    IF seq_to <> p_expected THEN
        outcome := 'conflict';
        RETURN;
    END IF;
    -- As late as possible: readers wait for this transaction to end before
    -- they read past its first position.
    position_from := take_positions(p_count);
    position_to := position_from + p_count - 1;
    outcome := 'append';
END $$;

-- The second: the events, the request id's answer and the new head.
CREATE FUNCTION finish_append(
    p_game TEXT, p_positions BIGINT[], p_seqs BIGINT[], p_envelopes BYTEA[],
    p_request TEXT, p_time BIGINT, p_last_hash BYTEA
) RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    n INT := cardinality(p_seqs);
BEGIN
    INSERT INTO events (global_position, game, seq, envelope)
        SELECT p, p_game, s, e FROM unnest(p_positions, p_seqs, p_envelopes) AS t(p, s, e);
    IF p_request <> '' THEN
        INSERT INTO requests (game, request_id, first_seq, last_seq, first_position, last_position, time_millis)
            VALUES (p_game, p_request, p_seqs[1], p_seqs[n], p_positions[1], p_positions[n], p_time);
    END IF;
    UPDATE games SET last_seq = p_seqs[n], last_hash = p_last_hash WHERE game = p_game;
END $$;
"#,
    ),
    (
        "V4__appends_in_one_statement",
        r#"
-- An append in one statement, so one round trip: begin_append, the
-- envelopes chained here, then finish_append (V3's two calls, which nodes
-- of the release before this one still make during a rolling upgrade).
-- The client encodes each event's envelope (`p_templates`) with any
-- previous hash and position; this places the real ones at the byte
-- offsets the client names (the previous hash at p_prev_hash_at, 32
-- bytes; the position at p_position_at, 8 bytes little-endian) and
-- replaces the last 32 bytes, the hash, with the SHA-256 of the rest, as
-- the envelope format says. Outcomes as begin_append's; for 'append',
-- last_hash is the new head's.
CREATE FUNCTION append_events(
    p_game TEXT, p_expected BIGINT, p_request TEXT, p_time BIGINT,
    p_templates BYTEA[], p_prev_hash_at INT, p_position_at INT,
    OUT outcome TEXT, OUT seq_from BIGINT, OUT seq_to BIGINT, OUT position_from BIGINT,
    OUT position_to BIGINT, OUT at_millis BIGINT, OUT head_hash BYTEA, OUT last_hash BYTEA
) LANGUAGE plpgsql AS $$
DECLARE
    n INT := cardinality(p_templates);
    envelopes BYTEA[] := '{}';
    positions BIGINT[] := '{}';
    seqs BIGINT[] := '{}';
    envelope BYTEA;
    at_position BIGINT;
BEGIN
    IF n IS NULL OR n < 1 THEN
        RAISE EXCEPTION 'an append needs at least one event';
    END IF;
    SELECT b.outcome, b.seq_from, b.seq_to, b.position_from, b.position_to, b.at_millis, b.head_hash
        INTO outcome, seq_from, seq_to, position_from, position_to, at_millis, head_hash
        FROM begin_append(p_game, p_expected, p_request, n, p_time) AS b;
    IF outcome <> 'append' THEN
        RETURN;
    END IF;
    last_hash := head_hash;
    FOR i IN 1 .. n LOOP
        at_position := position_from + i - 1;
        envelope := overlay(p_templates[i] PLACING last_hash FROM p_prev_hash_at + 1);
        FOR b IN 0 .. 7 LOOP
            envelope := set_byte(envelope, p_position_at + b, ((at_position >> (8 * b)) & 255)::INT);
        END LOOP;
        envelope := substr(envelope, 1, octet_length(envelope) - 32);
        last_hash := sha256(envelope);
        envelopes := envelopes || (envelope || last_hash);
        positions := positions || at_position;
        seqs := seqs || (p_expected + i);
    END LOOP;
    PERFORM finish_append(p_game, positions, seqs, envelopes, p_request, p_time, last_hash);
    seq_from := p_expected + 1;
    seq_to := p_expected + n;
    at_millis := p_time;
END $$;
"#,
    ),
    (
        "V5__appends_in_one_body_and_batches_in_one_call",
        r#"
-- append_events as one body: the same answers and writes as V4's, without
-- calling begin_append and finish_append, whose calls cost a fifth of its
-- execution (pg_stat_statements). Those two stay for nodes of the
-- releases before V4's during a rolling upgrade: they lock, check and
-- write as this does (this inserts the events one by one rather than from
-- arrays).
CREATE OR REPLACE FUNCTION append_events(
    p_game TEXT, p_expected BIGINT, p_request TEXT, p_time BIGINT,
    p_templates BYTEA[], p_prev_hash_at INT, p_position_at INT,
    OUT outcome TEXT, OUT seq_from BIGINT, OUT seq_to BIGINT, OUT position_from BIGINT,
    OUT position_to BIGINT, OUT at_millis BIGINT, OUT head_hash BYTEA, OUT last_hash BYTEA
) LANGUAGE plpgsql AS $$
DECLARE
    n INT := cardinality(p_templates);
    envelope BYTEA;
    at_position BIGINT;
    head_seq BIGINT;
BEGIN
    IF n IS NULL OR n < 1 THEN
        RAISE EXCEPTION 'an append needs at least one event';
    END IF;
    IF p_expected = 0 THEN
        INSERT INTO games (game, last_seq, last_hash, created_millis)
            VALUES (p_game, 0, decode(repeat('00', 32), 'hex'), p_time)
            ON CONFLICT (game) DO NOTHING;
    END IF;
    SELECT g.last_seq, g.last_hash INTO head_seq, head_hash FROM games g WHERE g.game = p_game FOR UPDATE;
    head_hash := coalesce(head_hash, decode(repeat('00', 32), 'hex'));
    IF p_request <> '' THEN
        SELECT 'repeat', r.first_seq, r.last_seq, r.first_position, r.last_position, r.time_millis
            INTO outcome, seq_from, seq_to, position_from, position_to, at_millis
            FROM requests r WHERE r.game = p_game AND r.request_id = p_request;
        IF FOUND THEN
            RETURN;
        END IF;
    END IF;
    seq_to := coalesce(head_seq, 0);
    IF seq_to <> p_expected THEN
        outcome := 'conflict';
        RETURN;
    END IF;
    position_from := take_positions(n);
    position_to := position_from + n - 1;
    last_hash := head_hash;
    FOR i IN 1 .. n LOOP
        at_position := position_from + i - 1;
        envelope := overlay(p_templates[i] PLACING last_hash FROM p_prev_hash_at + 1);
        FOR b IN 0 .. 7 LOOP
            envelope := set_byte(envelope, p_position_at + b, ((at_position >> (8 * b)) & 255)::INT);
        END LOOP;
        envelope := substr(envelope, 1, octet_length(envelope) - 32);
        last_hash := sha256(envelope);
        INSERT INTO events (global_position, game, seq, envelope)
            VALUES (at_position, p_game, p_expected + i, envelope || last_hash);
    END LOOP;
    IF p_request <> '' THEN
        INSERT INTO requests (game, request_id, first_seq, last_seq, first_position, last_position, time_millis)
            VALUES (p_game, p_request, p_expected + 1, p_expected + n, position_from, position_to, p_time);
    END IF;
    UPDATE games g SET last_seq = p_expected + n, last_hash = append_events.last_hash WHERE g.game = p_game;
    outcome := 'append';
    seq_from := p_expected + 1;
    seq_to := p_expected + n;
    at_millis := p_time;
END $$;

-- A batch of appends (to distinct games, in the order their heads are to
-- be locked) in one call, so that a batch is one statement prepared once
-- with binary parameters rather than a message of literals the server
-- parses and plans each time. Append i has p_counts[i] envelope templates,
-- consecutive in p_templates, its position at p_position_ats[i] (the
-- offset depends on the game id's length). Each row answers one append as
-- append_events does, `item` its index.
CREATE FUNCTION append_batch(
    p_games TEXT[], p_expected BIGINT[], p_requests TEXT[], p_times BIGINT[],
    p_counts INT[], p_templates BYTEA[], p_prev_hash_at INT, p_position_ats INT[]
) RETURNS TABLE (
    item INT, outcome TEXT, seq_from BIGINT, seq_to BIGINT, position_from BIGINT,
    position_to BIGINT, at_millis BIGINT, head_hash BYTEA, last_hash BYTEA
) LANGUAGE plpgsql AS $$
DECLARE
    first INT := 1;
BEGIN
    FOR i IN 1 .. coalesce(cardinality(p_games), 0) LOOP
        RETURN QUERY SELECT i, a.outcome, a.seq_from, a.seq_to, a.position_from, a.position_to,
                a.at_millis, a.head_hash, a.last_hash
            FROM append_events(p_games[i], p_expected[i], p_requests[i], p_times[i],
                p_templates[first : first + p_counts[i] - 1], p_prev_hash_at, p_position_ats[i]) AS a;
        first := first + p_counts[i];
    END LOOP;
END $$;
"#,
    ),
    (
        "V6__the_allocation_lock_released_on_cancellation",
        r#"
-- take_positions and safe_position as V3's, but with the allocation lock
-- (a session lock) taken and released inside one exception block. A
-- cancellation (statement_timeout, pg_cancel_backend) is raised at the
-- start of a statement: landing just after V3's lock was taken, outside
-- its block (or anywhere in safe_position, which had none), it left the
-- session holding the lock, and every append and safe read of every
-- node waiting for it until that connection closed. Unlocking a lock not
-- held (the error came while waiting for it) only warns.
CREATE OR REPLACE FUNCTION take_positions(n BIGINT) RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
    first BIGINT;
BEGIN
    BEGIN
        PERFORM pg_advisory_lock(7161132245584097282);
        first := nextval('event_positions');
        IF n > 1 THEN
            PERFORM setval('event_positions', first + n - 1);
        END IF;
        PERFORM pg_advisory_xact_lock(-first);
        PERFORM pg_advisory_unlock(7161132245584097282);
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        PERFORM pg_advisory_unlock(7161132245584097282);
        RAISE;
    END;
    RETURN first;
END $$;

CREATE OR REPLACE FUNCTION safe_position() RETURNS BIGINT LANGUAGE plpgsql AS $$
DECLARE
    allocated BIGINT;
    oldest_open BIGINT;
BEGIN
    BEGIN
        PERFORM pg_advisory_lock(7161132245584097282);
        SELECT CASE WHEN is_called THEN last_value ELSE 0 END INTO allocated FROM event_positions;
        PERFORM pg_advisory_unlock(7161132245584097282);
    EXCEPTION WHEN OTHERS OR query_canceled THEN
        PERFORM pg_advisory_unlock(7161132245584097282);
        RAISE;
    END;
    SELECT min(-((classid::BIGINT << 32) | objid::BIGINT)) INTO oldest_open
        FROM pg_locks
        WHERE locktype = 'advisory' AND objsubid = 1 AND classid::BIGINT >= 2147483648
          AND database = (SELECT oid FROM pg_database WHERE datname = current_database());
    RETURN least(allocated, coalesce(oldest_open - 1, allocated));
END $$;
"#,
    ),
    (
        "V7__heartbeats_by_the_database_clock",
        r#"
-- Heartbeats become times of the database's clock (clock_timestamp() when
-- written), no longer each node's own: a node whose clock ran ahead left
-- a heartbeat in the future, which made it look alive long after it
-- stopped and hid the downtime from the next start. The old rows cannot
-- be told apart from such ones and are dropped: without a heartbeat the
-- next start counts the downtime from each game's last event, which gives
-- players time back and never takes any.
DROP TABLE node_heartbeats;
CREATE TABLE node_heartbeats (
    node TEXT COLLATE "C" PRIMARY KEY,
    alive_at TIMESTAMPTZ NOT NULL
);
"#,
    ),
];

/// Applies the migrations the database lacks, one node at a time.
pub(super) fn migrate(client: &mut Client) -> Result<()> {
    migrate_to(client, None)
}

/// [`migrate`] up to `version` only (all with `None`): how a test makes
/// the schema an older release left.
pub(super) fn migrate_to(client: &mut Client, version: Option<u32>) -> Result<()> {
    let migrations = MIGRATIONS
        .iter()
        .map(|(name, sql)| refinery::Migration::unapplied(name, sql))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|error| StoreError::Io(std::io::Error::other(format!("bad migration: {error}"))))?;
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .map_err(pg_error)?;
    let mut runner = refinery::Runner::new(&migrations)
        .set_abort_divergent(true)
        .set_abort_missing(true);
    if let Some(version) = version {
        runner = runner.set_target(refinery::Target::Version(version));
    }
    runner.set_migration_table_name(HISTORY_TABLE);
    let ran = runner.run(client);
    let unlocked = client.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK]);
    ran.map_err(|error| {
        StoreError::Io(std::io::Error::other(format!(
            "migrating the PostgreSQL schema failed: {error}"
        )))
    })?;
    unlocked.map_err(pg_error)?;
    Ok(())
}

/// Refuses a server (or a session) that acknowledges commits it could
/// still lose, unless the configuration accepts that.
pub(super) fn check_durability(client: &mut Client, durability: Durability) -> Result<()> {
    let mut unsafe_settings = Vec::new();
    for (setting, bad) in [("fsync", "off"), ("synchronous_commit", "off")] {
        let value: String = client
            .query_one(&format!("SHOW {setting}"), &[])
            .map_err(pg_error)?
            .get(0);
        if value == bad {
            unsafe_settings.push(format!("{setting}={value}"));
        }
    }
    if unsafe_settings.is_empty() || durability != Durability::Flush {
        return Ok(());
    }
    Err(StoreError::Unavailable(format!(
        "PostgreSQL runs with {}: a commit it acknowledges can be lost in a crash; \
         fix the server's settings, or accept that knowingly: open the store with a durability \
         other than Durability::Flush (carcassonne serve --accept-unsafe-durability)",
        unsafe_settings.join(", ")
    )))
}
