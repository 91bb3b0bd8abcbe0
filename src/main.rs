//! The `carcassonne` binary: the command line of the project.

mod cli;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "carcassonne",
    version,
    about = "A Carcassonne game server and its tools"
)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Play a random game between bots and print the board and the scores.
    Demo(cli::DemoArgs),
    /// Replay a game record and print its scores.
    Score(cli::ScoreArgs),
    /// Check a game record: exits 0 only if every turn is legal and its
    /// `final_scores`, when present, are right.
    Verify(cli::VerifyArgs),
}

fn main() -> ExitCode {
    let args = Args::parse();
    let result = match args.command {
        Command::Demo(a) => cli::demo(&a),
        Command::Score(a) => cli::score(&a),
        Command::Verify(a) => cli::verify(&a),
    };
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}
