//! Time and the ways a game ends early (T-*), rule by rule.
//!
//! Every command is decided and applied at [`Table::now`], in ms: the
//! tests move it as a player's thinking would, and read the clocks the
//! engine derives from those times alone.

use carcassonne_engine::*;

use super::{Table, count, given, kind, pos};

pub const SECOND: u64 = 1_000;
pub const MINUTE: u64 = 60 * SECOND;

pub fn fischer(main_ms: u64, increment_ms: u64) -> TimeControl {
    TimeControl {
        main: Some(MainTime {
            initial_ms: main_ms,
            increment_ms,
        }),
        decision_ms: None,
        on_timeout: OnTimeout::Forfeit,
    }
}

pub fn per_decision(limit_ms: u64) -> TimeControl {
    TimeControl {
        main: None,
        decision_ms: Some(limit_ms),
        on_timeout: OnTimeout::Forfeit,
    }
}

pub fn auto(control: TimeControl) -> TimeControl {
    TimeControl {
        on_timeout: OnTimeout::Auto,
        ..control
    }
}

fn seat(n: u8) -> Actor {
    Actor::Seat(Seat(n))
}

/// The road of the records' first example: seat 0's W east of the start
/// tile takes a thief; a W west of it, turned, closes the road (3 points).
const THIEF: &str = "W 1 0 0 W";
const CLOSER: &str = "W -1 0 180";

/// Plays one command at `t.now`, failing loudly.
fn act(t: &mut Table, actor: Actor, command: Command) -> Vec<Event> {
    match t.execute(actor, command) {
        Ok(events) => events,
        Err(err) => panic!("{command:?} by {actor} at {} ms: {err}", t.now),
    }
}

/// The current seat draws `tile` and places it anywhere, with no follower.
fn anywhere(t: &mut Table, tile: &str) {
    t.draw(tile);
    let first = t.game.legal_placements()[0];
    t.place(first.pos.x, first.pos.y, i64::from(first.rotation.degrees()));
    t.follow(None);
}

fn time_out(t: &mut Table) -> Vec<Event> {
    act(t, Actor::Dealer, Command::TimeOut)
}

fn time_left(t: &Table) -> Vec<Option<u64>> {
    (0..t.game.players() as u8)
        .map(|s| t.game.time_left(Seat(s)))
        .collect()
}

fn outs(t: &Table) -> Vec<(Seat, Option<TileKind>)> {
    t.effects
        .iter()
        .filter_map(|e| match *e {
            Effect::Out { seat, abandoned } => Some((seat, abandoned)),
            _ => None,
        })
        .collect()
}

// ---- T-1: the time control ------------------------------------------------------

#[test]
fn t_1_a_time_control_needs_a_main_time_or_a_limit_each_within_30_days() {
    let setup = |time_control| Setup {
        rules: Rules::default(),
        players: vec!["A".into(), "B".into()],
        tiles: None,
        seed: None,
        time_control: Some(time_control),
    };
    let refused = |control: TimeControl, words: &str| {
        let error = Game::check_setup(&setup(control)).expect_err(words);
        assert_eq!(error.field(), "time_control");
        let message = error.to_string();
        assert!(
            message.starts_with("T-1: ") && message.contains(words),
            "{message:?} lacks {words:?}"
        );
    };
    refused(
        TimeControl {
            main: None,
            decision_ms: None,
            on_timeout: OnTimeout::Forfeit,
        },
        "needs a main time, a limit per decision, or both",
    );
    refused(fischer(0, 0), "the main time is 0 ms");
    refused(per_decision(0), "the limit per decision is 0 ms");
    refused(fischer(MAX_DURATION_MS + 1, 0), "the main time");
    refused(fischer(MINUTE, MAX_DURATION_MS + 1), "the increment");
    for fine in [
        fischer(1, 0),
        fischer(MAX_DURATION_MS, MAX_DURATION_MS),
        per_decision(MAX_DURATION_MS),
    ] {
        assert_eq!(Game::check_setup(&setup(fine)), Ok(()));
    }
}

#[test]
fn t_1_without_a_time_control_no_clock_runs_and_nobody_times_out() {
    let mut t = given(&[THIEF]).play();
    assert_eq!(t.game.deadline(), None);
    assert_eq!(t.game.clock_running(), None);
    assert_eq!(time_left(&t), [None, None]);
    t.draw("B");
    t.now = 365 * 24 * 60 * MINUTE;
    assert!(matches!(
        t.execute(Actor::Dealer, Command::TimeOut),
        Err(PlayError::Rule { rule: id::T_5, .. })
    ));
    // Resigning works in every game (T-8).
    act(&mut t, seat(0), Command::Resign);
    assert_eq!(t.game.ending(), Some(Ending::Resigned(Seat(0))));
}

// ---- T-2: whose clock runs ----------------------------------------------------------

#[test]
fn t_2_the_clock_of_the_seat_owing_the_decision_runs_until_its_answer_is_stored() {
    let mut t = given(&[THIEF, CLOSER])
        .clock(fischer(MINUTE, 0))
        .play_until(CLOSER);
    // Seat 0's turn took no time: it was played at 0 ms.
    assert_eq!(time_left(&t), [Some(MINUTE), Some(MINUTE)]);
    assert_eq!(
        t.game.clock_running(),
        None,
        "no clock runs while a tile is drawn"
    );
    assert_eq!(t.game.deadline(), None);
    t.now = 2 * SECOND;
    t.draw("W");
    assert_eq!(t.game.clock_running(), Some(Seat(1)));
    assert_eq!(t.game.deadline(), Some(2 * SECOND + MINUTE), "from its draw on");
    t.now = 9 * SECOND;
    t.place(-1, 0, 180);
    assert_eq!(time_left(&t), [Some(MINUTE), Some(MINUTE - 7 * SECOND)]);
    assert_eq!(t.game.deadline(), Some(9 * SECOND + MINUTE - 7 * SECOND));
    t.now = 10 * SECOND;
    t.follow(None);
    assert_eq!(time_left(&t), [Some(MINUTE), Some(MINUTE - 8 * SECOND)]);
}

#[test]
fn t_2_with_the_count_the_redeploying_seat_s_clock_runs_not_the_placer_s() {
    // Seat 1 has a knight in the castle (the count moved to the market);
    // seat 0's E closes CO12's city, so seat 1 may redeploy onto it (C-6).
    let lines = ["U 1 2 90 N", "W 1 3 0", "deploy 1 castle market", "E 2 -1 270"];
    let mut t = given(&lines).rules(count()).clock(fischer(MINUTE, 0)).play();
    assert_eq!(
        t.game.pending(),
        Pending::Redeploy {
            player: Seat(1),
            placer: Seat(0)
        }
    );
    assert_eq!(t.game.clock_running(), Some(Seat(1)));
    t.now = 20 * SECOND;
    t.turn("redeploy 1 2 -1 W");
    assert_eq!(
        time_left(&t),
        [Some(MINUTE), Some(MINUTE - 20 * SECOND)],
        "the redeploying seat's clock ran, not the placer's"
    );
}

#[test]
fn t_2_time_never_goes_back() {
    let mut t = given(&[THIEF]).clock(fischer(MINUTE, 0)).play();
    t.now = 5 * SECOND;
    t.draw("B");
    t.now = 4 * SECOND;
    let error = t.try_place(0, -1, 0).expect_err("a time before the last event");
    assert_eq!(error.rule_id(), Some(id::T_2), "{error}");
    assert!(error.to_string().contains("time never goes back"), "{error}");
}

// ---- T-3: the increment -----------------------------------------------------------------

#[test]
fn t_3_a_seat_earns_its_increment_once_each_time_it_hands_the_game_over() {
    let mut t = given(&[THIEF, CLOSER])
        .clock(fischer(MINUTE, 5 * SECOND))
        .play_until(THIEF);
    t.draw("W");
    t.now = SECOND;
    t.place(1, 0, 0);
    assert_eq!(
        time_left(&t)[0],
        Some(MINUTE - SECOND),
        "not yet: its follower is its own"
    );
    t.now = 3 * SECOND;
    t.follow(Some("W"));
    assert_eq!(
        time_left(&t),
        [Some(MINUTE - 3 * SECOND + 5 * SECOND), Some(MINUTE)],
        "one increment for the turn of two decisions"
    );
}

/// A small deterministic generator for think times.
struct Xorshift(u64);

impl Xorshift {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// Whole seeded games with random think times and pauses: every seat's
/// main time must equal its initial time, plus one increment per hand-over
/// counted here, minus the time it was seen thinking; and every decision's
/// deadline must be where the main time and the limit put it.
#[test]
fn t_3_t_4_t_10_increments_limits_and_pauses_add_up_exactly_over_whole_games() {
    let increment = 3 * SECOND;
    let limit = 40 * SECOND;
    let control = TimeControl {
        main: Some(MainTime {
            initial_ms: 10 * MINUTE,
            increment_ms: increment,
        }),
        decision_ms: Some(limit),
        on_timeout: OnTimeout::Forfeit,
    };
    for (rules, players, seed) in [
        (Rules::default(), 2, 1),
        (Rules::default().with(Expansion::River), 3, 2),
        (count().with(Expansion::River), 4, 3),
        (count(), 5, 4),
    ] {
        let setup = Setup {
            rules,
            players: (0..players).map(|i| format!("P{i}")).collect(),
            tiles: None,
            seed: Some(Seed::from_u64(seed)),
            time_control: Some(control),
        };
        let mut game = Game::new(setup);
        let mut now = 1_700_000_000_000;
        game.apply_at(&Event::Created(game.setup().clone()), now, &mut ());
        game.run_automatic(&mut Vec::new(), &mut ());
        let mut rng = Xorshift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut thought = vec![0u64; players];
        let mut handovers = vec![0u64; players];
        // The decision's own time used so far (its limit, T-4), across pauses.
        let mut used = 0;
        let mut decisions = 0;
        while let Some(owner) = game.decision_owner() {
            let o = owner.index();
            let deadline = game.deadline().expect("a clock runs");
            let main_left = (10 * MINUTE + increment * handovers[o]) - thought[o];
            assert_eq!(
                game.time_left(owner),
                Some(main_left),
                "seed {seed}, decision {decisions}"
            );
            assert_eq!(
                deadline,
                now + main_left.min(limit - used),
                "seed {seed}, decision {decisions}"
            );
            if rng.below(10) == 0 {
                // The server goes down for a while after some thinking.
                let alive = rng.below(deadline - now);
                let back = now + alive + rng.below(3 * 60 * MINUTE);
                game.execute_at(
                    back,
                    Actor::Dealer,
                    &Command::Resume {
                        down_since_ms: now + alive,
                    },
                    &mut (),
                )
                .expect("a resumption");
                thought[o] += alive;
                used += alive;
                now = back;
                continue;
            }
            let think = rng.below(deadline - now);
            now += think;
            thought[o] += think;
            let commands = game.legal_commands();
            let command = commands[rng.below(commands.len() as u64) as usize];
            game.execute_at(now, Actor::Seat(owner), &command, &mut ())
                .unwrap_or_else(|e| panic!("seed {seed}: {command:?}: {e}"));
            used = 0;
            decisions += 1;
            if game.pending().actor() != Some(Actor::Seat(owner)) {
                handovers[o] += 1;
            }
        }
        assert!(
            game.is_finished() && decisions > 100,
            "seed {seed}: {decisions} decisions"
        );
        for s in 0..players {
            assert_eq!(
                game.time_left(Seat(s as u8)),
                Some(10 * MINUTE + increment * handovers[s] - thought[s]),
                "seed {seed}: seat {s} at the end"
            );
        }
    }
}

// ---- T-4: the deadline ----------------------------------------------------------------------

#[test]
fn t_4_the_deadline_is_the_earlier_of_the_main_time_and_the_decision_s_limit() {
    let control = TimeControl {
        main: Some(MainTime {
            initial_ms: 20 * SECOND,
            increment_ms: 0,
        }),
        decision_ms: Some(15 * SECOND),
        on_timeout: OnTimeout::Forfeit,
    };
    let mut t = given(&[THIEF]).clock(control).play_until(THIEF);
    t.draw("W");
    assert_eq!(t.game.deadline(), Some(15 * SECOND), "the limit comes first");
    t.now = 14 * SECOND;
    t.place(1, 0, 0);
    assert_eq!(t.game.deadline(), Some(20 * SECOND), "then the main time's 6 s");
}

#[test]
fn t_4_at_the_deadline_nothing_but_the_timeout_may_be_stored() {
    let mut t = given(&[THIEF]).clock(per_decision(10 * SECOND)).play();
    t.now = 5 * SECOND;
    t.draw("B");
    let deadline = 15 * SECOND;
    assert_eq!(t.game.deadline(), Some(deadline));
    // One ms before: on time.
    let mut early = t.game.clone();
    early
        .execute_at(
            deadline - 1,
            seat(1),
            &Command::PlaceTile {
                pos: pos(0, -1),
                rotation: Rotation::R0,
            },
            &mut (),
        )
        .expect("on time");
    t.now = deadline;
    let late = OutOfTime(Seat(1), deadline);
    assert_eq!(t.try_place(0, -1, 0), Err(late.error()), "the answer");
    assert_eq!(
        t.execute(seat(0), Command::Resign),
        Err(late.error()),
        "another seat's resignation"
    );
    assert_eq!(
        t.execute(seat(1), Command::Resign),
        Err(late.error()),
        "its own resignation"
    );
    assert_eq!(t.execute(seat(0), Command::Abort), Err(late.error()), "an abort");
    assert_eq!(late.error().rule_id(), Some(id::T_4));
    assert_eq!(time_out(&mut t), [Event::TimedOut(Seat(1))]);
}

struct OutOfTime(Seat, u64);

impl OutOfTime {
    fn error(&self) -> PlayError {
        PlayError::OutOfTime {
            seat: self.0,
            deadline_ms: self.1,
        }
    }
}

// ---- T-5: the timeout -------------------------------------------------------------------------

#[test]
fn t_5_the_timeout_comes_at_the_deadline_and_never_before() {
    let mut t = given(&[THIEF]).clock(fischer(MINUTE, 0)).play_until(THIEF);
    t.now = 7;
    t.draw("W");
    t.now = 7 + MINUTE - 1;
    match t.execute(Actor::Dealer, Command::TimeOut) {
        Err(PlayError::Rule { rule, message }) => {
            assert_eq!(rule, id::T_5);
            assert!(
                message.contains("comes before its deadline") && message.contains("(1 ms early)"),
                "{message}"
            );
        }
        other => panic!("an early timeout: {other:?}"),
    }
    t.now = 7 + MINUTE;
    assert!(
        matches!(
            t.execute(seat(1), Command::TimeOut),
            Err(PlayError::Rule { rule: id::T_5, .. })
        ),
        "only the server times a decision out"
    );
    assert_eq!(time_out(&mut t), [Event::TimedOut(Seat(0))]);
    assert_eq!(t.game.ending(), Some(Ending::OutOfTime(Seat(0))));
}

// ---- T-6: going out -------------------------------------------------------------------------------

#[test]
fn t_6_forfeit_with_two_players_ends_the_game_and_the_other_seat_wins() {
    let mut t = given(&[THIEF, CLOSER, "B 0 -1 0 cloister"])
        .clock(fischer(MINUTE, 0))
        .play_until("B 0 -1 0 cloister");
    assert_eq!(t.scores(), [3, 0]);
    t.draw("B");
    t.now = MINUTE;
    time_out(&mut t);
    assert!(t.game.is_finished());
    assert_eq!(t.game.ending(), Some(Ending::OutOfTime(Seat(0))));
    assert_eq!(t.scores(), [3, 0], "no final scoring");
    assert_eq!(
        t.game.ranking(),
        Some(vec![2, 1]),
        "the other seat wins, whatever the scores"
    );
    assert_eq!(t.game.winners(), Seats(0b10));
    assert_eq!(outs(&t), [(Seat(0), Some(kind("B")))]);
    assert_eq!(t.game.deadline(), None);
}

#[test]
fn t_6_forfeit_with_four_players_skips_the_seat_whose_followers_still_score() {
    let mut t = given(&[THIEF, "B", CLOSER, "B 0 -1 0", "V", "V"])
        .players(4)
        .clock(fischer(MINUTE, 0))
        .table(0);
    t.turn(THIEF);
    t.draw("B");
    assert_eq!(t.game.clock_running(), Some(Seat(1)));
    t.now = MINUTE;
    time_out(&mut t);
    assert_eq!(outs(&t), [(Seat(1), Some(kind("B")))], "its tile left the game");
    assert_eq!(t.game.out_reason(Seat(1)), Some(OutReason::OutOfTime));
    assert_eq!(
        t.game.pending(),
        Pending::Draw { player: Seat(2) },
        "the next seat draws"
    );
    assert_eq!(t.game.bag_left(), 4);
    // Seat 2 closes seat 0's road; seat 1's turns are skipped from now on.
    t.turn(CLOSER);
    assert_eq!(t.scored_by(id::B_S1), [(vec![0], 3, id::B_S1)]);
    t.turn("B 0 -1 0");
    assert_eq!(t.game.pending(), Pending::Draw { player: Seat(0) });
    anywhere(&mut t, "V");
    assert_eq!(
        t.game.pending(),
        Pending::Draw { player: Seat(2) },
        "seat 1 is skipped"
    );
    let error = t.execute(seat(1), Command::Resign).expect_err("an out seat");
    assert_eq!(error.rule_id(), Some(id::T_6), "{error}");
    assert!(
        error
            .to_string()
            .contains("seat 1 is out of the game (out of time)"),
        "{error}"
    );
}

#[test]
fn t_6_a_seat_out_before_its_follower_decision_deploys_none_and_its_turn_goes_on() {
    let mut t = given(&[THIEF, CLOSER]).players(3).play_until(CLOSER);
    t.draw("W");
    t.place(-1, 0, 180);
    act(&mut t, seat(1), Command::Resign);
    assert_eq!(t.scored(), [(vec![0], 3, id::B_S1)], "the turn scored the road");
    assert_eq!(t.game.pending(), Pending::Draw { player: Seat(2) });
    assert_eq!(
        t.game.supply(),
        [7, 7, 7],
        "no follower for the seat that resigned"
    );
}

#[test]
fn t_6_with_the_count_a_seat_out_is_asked_for_no_redeploy() {
    // Three seats: seat 1 deploys a knight to the castle; seat 2's E
    // closes CO12's city, which seat 1 could redeploy onto (C-6).
    let lines = ["U 1 2 90 N", "W 1 3 0", "deploy 1 castle market", "E 2 -1 270"];
    let before = given(&lines).players(3).rules(count()).play_until("E 2 -1 270");
    let mut asked = Table {
        game: before.game.clone(),
        effects: Vec::new(),
        now: 0,
    };
    asked.turn("E 2 -1 270");
    assert_eq!(
        asked.game.pending(),
        Pending::Redeploy {
            player: Seat(1),
            placer: Seat(2)
        }
    );
    let mut t = before;
    act(&mut t, seat(1), Command::Resign);
    t.turn("E 2 -1 270");
    assert_eq!(
        t.game.pending(),
        Pending::Draw { player: Seat(0) },
        "no redeploy round for seat 1"
    );
    assert_eq!(t.quarter("castle"), [0, 1, 0], "its knight stays in the castle");
}

#[test]
fn t_6_when_one_seat_is_left_it_wins() {
    let mut t = given(&[THIEF, "V"])
        .players(3)
        .clock(fischer(MINUTE, 0))
        .play_until("V");
    act(&mut t, seat(0), Command::Resign);
    assert!(!t.game.is_finished());
    t.draw("V");
    assert_eq!(t.game.clock_running(), Some(Seat(1)));
    t.now = MINUTE;
    time_out(&mut t);
    assert_eq!(t.game.ending(), Some(Ending::OutOfTime(Seat(1))));
    assert_eq!(
        t.game.ranking(),
        Some(vec![3, 2, 1]),
        "the last seat wins; the first out ranks last"
    );
    assert_eq!(t.game.winners(), Seats(0b100));
}

// ---- T-7: auto ---------------------------------------------------------------------------------------

#[test]
fn t_7_auto_places_on_the_first_legal_placement_with_no_follower_and_goes_on() {
    let mut t = given(&[THIEF, "V"])
        .clock(auto(fischer(MINUTE, 2 * SECOND)))
        .play_until("V");
    t.draw("V");
    let placements = t.game.legal_placements();
    let key = |p: &Placement| (p.pos.x, p.pos.y, p.rotation.degrees());
    let first = *placements.iter().min_by_key(|p| key(p)).expect("V fits");
    assert!(placements.iter().all(|p| key(p) >= key(&first)));
    t.now = MINUTE;
    time_out(&mut t);
    assert_eq!(
        t.game.tile_at(first.pos).map(|tile| (tile.kind, tile.rotation)),
        Some((kind("V"), first.rotation))
    );
    let decided: Vec<Command> = t
        .effects
        .iter()
        .filter_map(|e| match *e {
            Effect::DecidedFor {
                seat: Seat(1),
                command,
            } => Some(command),
            _ => None,
        })
        .collect();
    assert_eq!(
        decided,
        [
            Command::PlaceTile {
                pos: first.pos,
                rotation: first.rotation
            },
            Command::PlaceFollower(None)
        ]
    );
    assert_eq!(
        t.game.pending(),
        Pending::Draw { player: Seat(0) },
        "the game goes on"
    );
    assert_eq!(t.game.out_reason(Seat(1)), None);
    assert_eq!(
        time_left(&t),
        [Some(MINUTE + 2 * SECOND), Some(2 * SECOND)],
        "its increment, and no more"
    );
}

#[test]
fn t_7_auto_passes_the_count_s_decisions() {
    let lines = ["U 1 2 90 N", "W 1 3 0"];
    let mut t = given(&lines)
        .rules(count())
        .clock(auto(fischer(MINUTE, 0)))
        .play();
    assert_eq!(t.game.pending(), Pending::DeployToCarcassonne { player: Seat(1) });
    t.now = MINUTE;
    time_out(&mut t);
    assert_eq!(t.quarter("castle"), [0, 0], "no deploy");
    assert!(t.effects.contains(&Effect::DecidedFor {
        seat: Seat(1),
        command: Command::Pass
    }));
    assert_eq!(t.game.pending(), Pending::Draw { player: Seat(0) });
}

// ---- T-8: resign --------------------------------------------------------------------------------------

#[test]
fn t_8_a_seat_may_resign_at_any_time_even_during_another_seat_s_decision() {
    let mut t = given(&[THIEF, "V", "V"])
        .players(3)
        .clock(fischer(MINUTE, 0))
        .play_until(THIEF);
    t.draw("W");
    t.now = 10 * SECOND;
    let deadline = t.game.deadline();
    act(&mut t, seat(2), Command::Resign);
    assert_eq!(t.game.out_reason(Seat(2)), Some(OutReason::Resigned));
    assert_eq!(
        t.game.pending(),
        Pending::PlaceTile {
            player: Seat(0),
            tile: kind("W")
        },
        "seat 0 still decides"
    );
    assert_eq!(t.game.deadline(), deadline, "and its clock runs on");
    t.now = 20 * SECOND;
    t.place(1, 0, 0);
    t.follow(None);
    anywhere(&mut t, "V");
    assert_eq!(
        t.game.pending(),
        Pending::Draw { player: Seat(0) },
        "seat 2 is skipped"
    );
    assert_eq!(time_left(&t)[0], Some(MINUTE - 20 * SECOND));
}

// ---- T-9: abort ------------------------------------------------------------------------------------------

#[test]
fn t_9_any_seat_may_abort_until_every_seat_has_had_a_decision() {
    let mut t = given(&[THIEF, CLOSER]).play_until(THIEF);
    t.draw("W");
    assert!(t.game.may_abort());
    let mut aborted = Table {
        game: t.game.clone(),
        effects: Vec::new(),
        now: 0,
    };
    act(&mut aborted, seat(1), Command::Abort);
    assert_eq!(aborted.game.ending(), Some(Ending::Aborted(Seat(1))));
    assert_eq!(aborted.game.ranking(), None, "no result");
    assert_eq!(aborted.game.winners(), Seats::default());
    assert_eq!(aborted.effects, [Effect::Finished], "no final scoring");
    // Once both seats have had a decision, it is too late.
    t.place(1, 0, 0);
    t.follow(Some("W"));
    assert!(t.game.may_abort(), "seat 1 has had none yet");
    t.draw("W");
    t.place(-1, 0, 180);
    assert!(!t.game.may_abort());
    let error = t.execute(seat(0), Command::Abort).expect_err("too late");
    assert_eq!(error.rule_id(), Some(id::T_9), "{error}");
}

#[test]
fn t_9_a_decision_taken_by_auto_counts_as_the_seat_s_first() {
    let mut t = given(&[THIEF, "V"])
        .clock(auto(per_decision(MINUTE)))
        .play_until("V");
    t.draw("V");
    t.now = MINUTE;
    time_out(&mut t);
    assert!(!t.game.may_abort());
}

// ---- T-10: the server's downtime -------------------------------------------------------------------------

#[test]
fn t_10_the_server_s_downtime_counts_for_nobody() {
    let control = TimeControl {
        main: Some(MainTime {
            initial_ms: MINUTE,
            increment_ms: 0,
        }),
        decision_ms: Some(30 * SECOND),
        on_timeout: OnTimeout::Forfeit,
    };
    let mut t = given(&[THIEF]).clock(control).play_until(THIEF);
    t.draw("W");
    // Seat 0 thought for 10 s when the server went down; it is back after
    // an hour.
    t.now = 60 * MINUTE;
    act(
        &mut t,
        Actor::Dealer,
        Command::Resume {
            down_since_ms: 10 * SECOND,
        },
    );
    assert_eq!(time_left(&t)[0], Some(MINUTE - 10 * SECOND));
    assert_eq!(
        t.game.deadline(),
        Some(60 * MINUTE + 20 * SECOND),
        "the decision's limit kept the 10 s it had used"
    );
    assert_eq!(
        t.game.pending(),
        Pending::PlaceTile {
            player: Seat(0),
            tile: kind("W")
        }
    );
}

#[test]
fn t_10_a_resumption_names_a_time_between_the_last_event_and_itself() {
    let mut t = given(&[THIEF]).clock(fischer(MINUTE, 0)).play_until(THIEF);
    t.now = 5 * SECOND;
    t.draw("W");
    t.now = 10 * SECOND;
    for down_since_ms in [4 * SECOND, 11 * SECOND] {
        let error = t
            .execute(Actor::Dealer, Command::Resume { down_since_ms })
            .expect_err("out of range");
        assert_eq!(error.rule_id(), Some(id::T_10), "{error}");
    }
    assert!(
        matches!(
            t.execute(
                seat(0),
                Command::Resume {
                    down_since_ms: 6 * SECOND
                }
            ),
            Err(PlayError::Rule { rule: id::T_10, .. })
        ),
        "only the server resumes"
    );
    // Past the old deadline while it was down: the clock had run out
    // before it went down, so the timeout is due at once.
    t.now = 10 * MINUTE;
    act(
        &mut t,
        Actor::Dealer,
        Command::Resume {
            down_since_ms: 5 * SECOND + MINUTE + 1,
        },
    );
    assert_eq!(t.game.deadline(), Some(10 * MINUTE));
    assert_eq!(time_out(&mut t), [Event::TimedOut(Seat(0))]);
}

// ---- T-11: the result ---------------------------------------------------------------------------------------

#[test]
fn t_11_the_seats_still_in_rank_by_score_and_the_seats_out_below_them() {
    // Four seats: seat 3 resigns first, then seat 1; seat 0's road scores
    // 3, seat 2 nothing.
    let mut t = given(&[THIEF, CLOSER, "B 0 -1 0"]).players(4).table(0);
    act(&mut t, seat(3), Command::Resign);
    t.turn(THIEF);
    act(&mut t, seat(1), Command::Resign);
    t.turn(CLOSER);
    assert_eq!(t.game.pending(), Pending::Draw { player: Seat(0) });
    t.turn("B 0 -1 0");
    assert_eq!(t.game.ending(), Some(Ending::Normal));
    assert_eq!(t.scores(), [3, 0, 0, 0]);
    assert_eq!(
        t.game.ranking(),
        Some(vec![1, 3, 2, 4]),
        "by score, then the last out first"
    );

    // Equal scores share a rank.
    let level = given(&["B 0 -1 0"]).players(3).play_to_end();
    assert_eq!(level.scores(), [0, 0, 0]);
    assert_eq!(level.game.ranking(), Some(vec![1, 1, 1]));
    assert_eq!(level.game.winners(), Seats(0b111));
}
