//! The bots' tests: every level plays whole games of every rule
//! combination legally, decides the same for the same seed, sees only the
//! public game, and greedy is stronger than random.

use carcassonne_engine::{Actor, Command, Expansion, Game, Rules, Seed, Setup};

use super::{Bot, Level};

/// Every level at a budget the tests can afford.
const LEVELS: [Level; 3] = [Level::Random, Level::Greedy, Level::Search { iterations: 8 }];

fn combinations() -> [Rules; 4] {
    let base = Rules::default();
    let river = base.with(Expansion::River);
    [
        base,
        river,
        base.with(Expansion::Count),
        river.with(Expansion::Count),
    ]
}

fn new_game(rules: Rules, players: usize, seed: u64) -> Game {
    let mut game = Game::new(Setup {
        rules,
        players: (0..players).map(|i| format!("P{i}")).collect(),
        tiles: None,
        seed: Some(Seed::from_u64(seed)),
        time_control: None,
    });
    game.run_automatic(&mut Vec::new(), &mut ());
    game
}

/// Plays `game` to its end with one bot per seat; returns every decision.
fn play(game: &mut Game, bots: &mut [Bot]) -> Vec<Command> {
    let mut decisions = Vec::new();
    while !game.is_finished() {
        let public = game.public();
        let seat = game.pending().player().expect("a seat decides");
        let (decider, command) = bots[seat.index()].decide(&public).expect("a choice");
        assert_eq!(decider, seat);
        assert!(
            game.legal_commands().contains(&command),
            "{command:?} is not legal"
        );
        game.execute(Actor::Seat(seat), &command, &mut ())
            .unwrap_or_else(|e| panic!("{command:?} refused: {e}"));
        decisions.push(command);
    }
    decisions
}

fn bots(level: Level, players: usize, seed: u64) -> Vec<Bot> {
    (0..players)
        .map(|seat| Bot::new(level, Seed::from_u64(seed * 10 + seat as u64)))
        .collect()
}

#[test]
fn every_level_plays_whole_games_of_every_rule_combination_legally() {
    for level in LEVELS {
        for (index, rules) in combinations().into_iter().enumerate() {
            for players in 2..=5 {
                let seed = (index * 10 + players) as u64;
                let mut game = new_game(rules, players, seed);
                let decisions = play(&mut game, &mut bots(level, players, seed));
                assert!(game.is_finished(), "{level:?}, rules {index}, {players} players");
                assert!(decisions.len() > 50);
            }
        }
    }
}

#[test]
fn a_bot_of_one_level_and_seed_decides_the_same_in_the_same_game() {
    for level in LEVELS {
        let rules = combinations()[3];
        let first = play(&mut new_game(rules, 3, 5), &mut bots(level, 3, 9));
        let again = play(&mut new_game(rules, 3, 5), &mut bots(level, 3, 9));
        assert_eq!(first, again, "{level:?}");
        let other = play(&mut new_game(rules, 3, 5), &mut bots(level, 3, 10));
        assert_ne!(first, other, "{level:?}: another seed plays otherwise");
    }
}

#[test]
fn games_that_differ_only_in_the_order_of_the_bag_give_a_bot_the_same_input_and_decision() {
    for level in LEVELS {
        for (index, rules) in combinations().into_iter().enumerate() {
            let mut game = new_game(rules, 2, index as u64);
            let mut players = bots(Level::Random, 2, 1);
            for _ in 0..20 {
                let seat = game.pending().player().unwrap();
                let (_, command) = players[seat.index()].decide(&game.public()).unwrap();
                game.execute(Actor::Seat(seat), &command, &mut ()).unwrap();
            }
            // Two deals of what is left: different bags, one public game.
            let public = game.public();
            let forward = public.deal(|_| {});
            let backward = public.deal(|tiles| tiles.reverse());
            assert_ne!(forward, backward, "rules {index}: the bags differ");
            assert_eq!(forward.public(), backward.public(), "rules {index}");
            let decide = |game: &Game| Bot::new(level, Seed::from_u64(3)).decide(&game.public());
            assert_eq!(decide(&forward), decide(&backward), "{level:?}, rules {index}");
        }
    }
}

#[test]
fn greedy_wins_most_duels_against_random() {
    let games = 20;
    let mut greedy_wins = 0;
    for n in 0..games {
        // Greedy takes the first seat in half of the games.
        let greedy_seat = (n % 2) as usize;
        let mut players = vec![
            Bot::new(Level::Random, Seed::from_u64(100 + n)),
            Bot::new(Level::Random, Seed::from_u64(200 + n)),
        ];
        players[greedy_seat] = Bot::new(Level::Greedy, Seed::from_u64(300 + n));
        let mut game = new_game(Rules::default(), 2, 1000 + n);
        play(&mut game, &mut players);
        let scores = game.scores();
        if scores[greedy_seat] > scores[1 - greedy_seat] {
            greedy_wins += 1;
        }
    }
    assert!(greedy_wins >= 18, "greedy won {greedy_wins} of {games}");
}

#[test]
fn levels_are_named_as_the_command_line_spells_them() {
    for level in LEVELS {
        assert_eq!(Level::from_name(&level.name()), Some(level));
    }
    assert_eq!(Level::from_name("search"), Some(Level::SEARCH));
    assert_eq!(
        Level::from_name("search:500"),
        Some(Level::Search { iterations: 500 })
    );
    for wrong in [
        "grandmaster",
        "search:0",
        "search:-1",
        "search:",
        "search:99999999999",
    ] {
        assert_eq!(Level::from_name(wrong), None, "{wrong}");
    }
}

#[test]
fn the_search_runs_its_budget_asking_after_each_iteration_and_chooses_a_legal_choice() {
    let mut game = new_game(combinations()[1], 3, 77);
    let mut random = Bot::new(Level::Random, Seed::from_u64(1));
    for _ in 0..10 {
        let seat = game.pending().player().unwrap();
        let (_, command) = random.decide(&game.public()).unwrap();
        game.execute(Actor::Seat(seat), &command, &mut ()).unwrap();
    }
    let seat = game.pending().player().unwrap();
    let mut bot = Bot::new(Level::Greedy, Seed::from_u64(2));
    let mut asked = Vec::new();
    let searched = bot
        .search(&game.public(), seat, |done| {
            asked.push(done);
            done >= 40
        })
        .unwrap();
    assert_eq!(searched.iterations, 40);
    assert_eq!(
        asked,
        (1..=40).collect::<Vec<_>>(),
        "the budget is asked after every iteration"
    );
    assert!(game.legal_commands().contains(&searched.best));
    // A budget of one iteration still answers.
    let once = bot.search(&game.public(), seat, |_| true).unwrap();
    assert_eq!(once.iterations, 1);
    assert!(game.legal_commands().contains(&once.best));
}

#[test]
fn decide_within_stops_the_search_at_the_caller_s_word_or_its_level_s_iterations() {
    let game = new_game(combinations()[0], 2, 5);
    let public = game.public();
    let count = |level: Level, stop_at: u32| {
        let mut asked = 0;
        let mut bot = Bot::new(level, Seed::from_u64(9));
        let (seat, command) = bot
            .decide_within(&public, |done| {
                asked = done;
                done >= stop_at
            })
            .expect("a choice");
        assert_eq!(Some(seat), game.pending().player());
        assert!(game.legal_commands().contains(&command));
        asked
    };
    // The caller's budget comes first...
    assert_eq!(count(Level::Search { iterations: 500 }, 3), 3);
    // ... or the level's, after which the caller is not asked again.
    assert_eq!(count(Level::Search { iterations: 5 }, 1_000), 4);
    // The other levels never search.
    assert_eq!(count(Level::Greedy, 1), 0);
    // Without a budget of its own it decides as `decide` does.
    let mut within = Bot::new(Level::Search { iterations: 20 }, Seed::from_u64(4));
    let mut plain = Bot::new(Level::Search { iterations: 20 }, Seed::from_u64(4));
    assert_eq!(within.decide_within(&public, |_| false), plain.decide(&public));
}

#[test]
fn a_bot_never_decides_a_draw_which_is_the_dealer_s() {
    let setup = Setup {
        rules: Rules::default(),
        players: vec!["A".into(), "B".into()],
        tiles: None,
        seed: None,
        time_control: None,
    };
    // Created, before its first draw: the draw names seat 0, but it is
    // the dealer's.
    let public = carcassonne_engine::PublicGame::created(setup, 0).expect("a setup");
    assert_eq!(
        public.game().pending().player(),
        Some(carcassonne_engine::Seat(0))
    );
    for level in LEVELS {
        assert_eq!(
            Bot::new(level, Seed::from_u64(1)).decide(&public),
            None,
            "{level:?}"
        );
    }
}
