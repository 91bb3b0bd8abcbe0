//! The picture commands: `render` (a record's board at any turn) and
//! `tiles` (every tile kind), as SVG or PNG, drawn by `carcassonne-picture`.

use std::process::ExitCode;

use anyhow::{Context as _, bail};
use carcassonne_engine::record::Record;
use carcassonne_picture::{BoardOptions, board_svg, svg_to_png, tile_sheet_svg};

use crate::cli::{INVALID, emit, read_input};

#[derive(clap::Args)]
pub struct RenderArgs {
    /// The record to draw; `-` reads standard input.
    file: String,
    /// Draw the board after the first N turns (0: the board as set up);
    /// by default after all of them and the final round.
    #[arg(long, value_name = "N")]
    turn: Option<usize>,
    /// Write to FILE: PNG if it ends in `.png`, SVG if in `.svg`; by
    /// default (or `-`) SVG on standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<String>,
    /// Write each column's and row's coordinate in the margins (SVG
    /// text: browsers show it, PNG has no text).
    #[arg(long)]
    coordinates: bool,
}

#[derive(clap::Args)]
pub struct TilesArgs {
    /// Write to FILE: PNG if it ends in `.png`, SVG if in `.svg`; by
    /// default (or `-`) SVG on standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<String>,
}

/// What a file's name asks for.
enum Format {
    Svg,
    Png,
}

fn format_of(file: &str) -> anyhow::Result<Format> {
    let lower = file.to_ascii_lowercase();
    if lower.ends_with(".png") {
        Ok(Format::Png)
    } else if lower.ends_with(".svg") {
        Ok(Format::Svg)
    } else {
        bail!("{file}: the output's name must end in .svg or .png")
    }
}

/// Writes `svg` where `output` says, as its extension says.
fn write_picture(svg: &str, output: Option<&str>) -> anyhow::Result<()> {
    match output {
        None | Some("-") => emit(svg)?,
        Some(file) => {
            let bytes = match format_of(file)? {
                Format::Svg => svg.as_bytes().to_vec(),
                Format::Png => svg_to_png(svg).context("drawing the PNG")?,
            };
            std::fs::write(file, bytes).with_context(|| format!("writing {file}"))?;
        }
    }
    Ok(())
}

pub fn render(args: &RenderArgs) -> anyhow::Result<ExitCode> {
    // The output's kind is checked before any work.
    if let Some(file) = args.output.as_deref().filter(|f| *f != "-") {
        format_of(file)?;
    }
    let text = read_input(&args.file)?;
    let record = match Record::parse(&text) {
        Ok(record) => record,
        Err(error) => {
            eprintln!("{error}");
            return Ok(ExitCode::from(INVALID));
        }
    };
    let turns = record.turns.len();
    // The record cut after its first N turns, its timeline with them (the
    // final round only follows the last turn).
    let record = match args.turn {
        Some(n) if n > turns => {
            bail!("--turn {n}: the record has {turns} turns, so N is 0 to {turns}")
        }
        Some(n) => record.first_turns(n),
        None => Ok(record),
    };
    let replay = match record.and_then(|record| record.replay()) {
        Ok(replay) => replay,
        Err(error) => {
            eprintln!("{error}");
            return Ok(ExitCode::from(INVALID));
        }
    };
    let options = BoardOptions {
        coordinates: args.coordinates,
        ..BoardOptions::default()
    };
    write_picture(&board_svg(&replay.game, &options), args.output.as_deref())?;
    Ok(ExitCode::SUCCESS)
}

pub fn tiles(args: &TilesArgs) -> anyhow::Result<ExitCode> {
    write_picture(&tile_sheet_svg(), args.output.as_deref())?;
    Ok(ExitCode::SUCCESS)
}
