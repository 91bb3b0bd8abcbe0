//! Information-set Monte Carlo tree search (single observer): each
//! iteration deals the bag anew from what is left in it (the public
//! multiset, [`PublicGame::deal`]), walks one tree of the seats' choices
//! with the choices that deal allows, grows it by one choice, plays on at
//! random for a few decisions and credits each choice on the way with its
//! seat's projected lead there (the scores if the game ended then). A choice that only some deals allow is judged
//! against the times it was available (its availability count), so that
//! the tree is one for every bag the bot cannot tell apart.

use carcassonne_engine::{Actor, Command, Game, PublicGame, Seat};

use crate::Bot;

/// Exploration constant of the UCB formula, for rewards between 0 and 1.
const EXPLORATION: f64 = 0.7;
/// Decisions a playout makes before its position is judged.
const PLAYOUT_DECISIONS: usize = 16;
/// Points of projected lead that make a reward of about 0.75.
const MARGIN_SCALE: f64 = 9.0;

/// A choice in the tree, reached from its parent.
struct Node {
    command: Command,
    /// The seat whose choice it is.
    mover: Seat,
    children: Vec<usize>,
    visits: u32,
    /// Iterations in which it was a legal choice at its parent.
    available: u32,
    /// The sum of its mover's rewards over its visits.
    reward: f64,
}

impl Node {
    fn ucb(&self) -> f64 {
        let visits = f64::from(self.visits.max(1));
        self.reward / visits + EXPLORATION * (f64::from(self.available.max(1)).ln() / visits).sqrt()
    }
}

/// The search's root choices, after it stopped.
pub struct Searched {
    /// The most visited choice.
    pub best: Command,
    /// Iterations run.
    pub iterations: u32,
}

impl Bot {
    /// Searches the decision pending in `game` for its seat until
    /// `stop(iterations so far)` says so (at least one iteration): the
    /// caller's budget, by count or by its own clock.
    pub fn search(
        &mut self,
        game: &PublicGame,
        seat: Seat,
        mut stop: impl FnMut(u32) -> bool,
    ) -> Option<Searched> {
        let mut tree: Vec<Node> = Vec::new();
        let mut root_children: Vec<usize> = Vec::new();
        let mut iterations = 0;
        loop {
            self.iterate(game, &mut tree, &mut root_children);
            iterations += 1;
            if stop(iterations) {
                break;
            }
        }
        let best = root_children
            .iter()
            .map(|&child| &tree[child])
            .filter(|node| node.mover == seat)
            .max_by_key(|node| node.visits)?;
        Some(Searched {
            best: best.command,
            iterations,
        })
    }

    fn iterate(&mut self, public: &PublicGame, tree: &mut Vec<Node>, root: &mut Vec<usize>) {
        let mut game = public.deal(|tiles| self.stream.shuffle(tiles));
        let mut path: Vec<usize> = Vec::new();
        // Selection and expansion.
        while let Some(mover) = game.pending().player() {
            let legal = game.legal_commands();
            if legal.is_empty() {
                break;
            }
            let children = match path.last() {
                Some(&parent) => tree[parent].children.clone(),
                None => root.clone(),
            };
            let mut untried: Vec<Command> = Vec::new();
            let mut best: Option<usize> = None;
            for &command in &legal {
                match children
                    .iter()
                    .copied()
                    .find(|&c| tree[c].command == command && tree[c].mover == mover)
                {
                    Some(child) => {
                        tree[child].available += 1;
                        if best.is_none_or(|b| tree[child].ucb() > tree[b].ucb()) {
                            best = Some(child);
                        }
                    }
                    None => untried.push(command),
                }
            }
            let (next, grown) = if untried.is_empty() {
                match best {
                    Some(best) => (best, false),
                    None => break,
                }
            } else {
                let command = untried[self.below(untried.len())];
                tree.push(Node {
                    command,
                    mover,
                    children: Vec::new(),
                    visits: 0,
                    available: 1,
                    reward: 0.0,
                });
                let child = tree.len() - 1;
                match path.last() {
                    Some(&parent) => tree[parent].children.push(child),
                    None => root.push(child),
                }
                (child, true)
            };
            if game
                .execute(Actor::Seat(mover), &tree[next].command, &mut ())
                .is_err()
            {
                break;
            }
            path.push(next);
            if grown {
                break;
            }
        }
        // Simulation: the rest of the game at random.
        self.play_out(&mut game);
        // Backpropagation: each choice credited with its mover's place.
        let rewards = rewards(&game);
        for &node in &path {
            let node = &mut tree[node];
            node.visits += 1;
            node.reward += rewards.get(node.mover.index()).copied().unwrap_or(0.0);
        }
    }

    /// Plays at random for at most [`PLAYOUT_DECISIONS`] decisions: the
    /// position after them is judged by its projected scores, which tell
    /// more than where a whole random game ends.
    fn play_out(&mut self, game: &mut Game) {
        // Choices counted and picked by index, events into one buffer: the
        // playout's hot loop lists nothing.
        let mut events = Vec::with_capacity(8);
        for _ in 0..PLAYOUT_DECISIONS {
            let Some(mover) = game.pending().player() else {
                return;
            };
            let count = game.legal_command_count();
            if count == 0 {
                return;
            }
            let Some(command) = game.legal_command(self.below(count)) else {
                return;
            };
            events.clear();
            if game
                .execute_into(game.time(), Actor::Seat(mover), &command, &mut events, &mut ())
                .is_err()
            {
                return;
            }
        }
    }
}

/// Each seat's reward for a position, between 0 and 1: the mean, over the
/// other seats, of a logistic of its projected lead over them
/// ([`Game::scores_if_ended_now`]; the final scores of a finished game),
/// [`MARGIN_SCALE`] points making about three quarters.
fn rewards(game: &Game) -> Vec<f64> {
    let scores = game.scores_if_ended_now();
    let players = scores.len();
    let others = (players.max(2) - 1) as f64;
    (0..players)
        .map(|seat| {
            let own = f64::from(scores[seat]);
            scores
                .iter()
                .enumerate()
                .filter(|&(other, _)| other != seat)
                .map(|(_, &theirs)| 1.0 / (1.0 + (-(own - f64::from(theirs)) / MARGIN_SCALE).exp()))
                .sum::<f64>()
                / others
        })
        .collect()
}
