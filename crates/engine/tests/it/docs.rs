//! The project's reference documents agree with the engine: the tile
//! tables of `docs/tiles.md` with the catalogue, and every record shown in
//! `docs/record-format.md` with `verify`. (The rule ids of `docs/rules.md`
//! are checked in `rules.rs`.)

use std::collections::BTreeSet;

use carcassonne_engine::record::Record;
use carcassonne_engine::*;

pub const RULES_MD: &str = include_str!("../../../../docs/rules.md");
pub const TILES_MD: &str = include_str!("../../../../docs/tiles.md");
pub const RECORD_FORMAT_MD: &str = include_str!("../../../../docs/record-format.md");

/// The ids that `docs/rules.md` defines: every list item that opens with
/// a bold word, `- **B-T1**: ...`, and that word must be a rule id.
pub fn defined_rule_ids() -> Vec<&'static str> {
    let ids: Vec<&str> = RULES_MD
        .lines()
        .filter_map(|line| line.strip_prefix("- **")?.split_once("**"))
        .map(|(id, _)| id)
        .collect();
    let odd: Vec<&&str> = ids.iter().filter(|id| !is_rule_id(id)).collect();
    assert!(
        odd.is_empty(),
        "docs/rules.md: bold list items that are no rule id: {odd:?}"
    );
    ids
}

/// Whether `word` has the shape of a rule id: `B-1`, `B-FS2`, `CD-10`.
pub fn is_rule_id(word: &str) -> bool {
    let Some((family, rest)) = word.split_once('-') else {
        return false;
    };
    let digits = rest.trim_start_matches(|c: char| c.is_ascii_uppercase());
    ["B", "R", "C", "CD", "T"].contains(&family)
        && !digits.is_empty()
        && digits.chars().all(|c| c.is_ascii_digit())
}

/// Every word of `text` shaped like a rule id.
pub fn mentioned_rule_ids(text: &str) -> BTreeSet<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| is_rule_id(w))
        .collect()
}

/// The fenced blocks of a markdown text: (info string, body).
fn fenced_blocks(text: &str) -> Vec<(&str, String)> {
    let mut blocks = Vec::new();
    let mut open: Option<(&str, String)> = None;
    for line in text.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => open = Some((info.trim(), String::new())),
            (Some(_), Some("")) => blocks.extend(open.take()),
            (Some((_, body)), _) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "a fenced block is not closed");
    blocks
}

#[test]
fn every_record_of_the_record_format_verifies_and_every_rejected_one_fails_as_shown() {
    let blocks = fenced_blocks(RECORD_FORMAT_MD);
    let (mut accepted, mut rejected) = (0, 0);
    for (i, (info, body)) in blocks.iter().enumerate() {
        match *info {
            "json" => {
                let record = Record::parse(body).unwrap_or_else(|e| panic!("{e}\n{body}"));
                record.verify().unwrap_or_else(|e| panic!("{e}\n{body}"));
                accepted += 1;
            }
            "json rejected" => {
                let expected = match blocks.get(i + 1) {
                    Some(("text", message)) => message.trim(),
                    _ => panic!("a rejected record must be followed by its ```text message\n{body}"),
                };
                let error = Record::parse(body).and_then(|r| r.verify()).err();
                assert_eq!(
                    error.map(|e| e.to_string()).as_deref(),
                    Some(expected),
                    "\n{body}"
                );
                rejected += 1;
            }
            _ => {}
        }
    }
    assert!(
        accepted >= 3 && rejected >= 2,
        "{accepted} records, {rejected} rejected ones"
    );
}

// ---- docs/tiles.md ------------------------------------------------------------

/// The rows of the markdown tables whose header starts with `first`.
fn table_rows<'a>(text: &'a str, first: &str) -> Vec<Vec<&'a str>> {
    let mut rows = Vec::new();
    let mut in_table = false;
    for line in text.lines() {
        let cells: Vec<&str> = line
            .trim()
            .strip_prefix('|')
            .and_then(|l| l.strip_suffix('|'))
            .map(|l| l.split('|').map(str::trim).collect())
            .unwrap_or_default();
        if cells.is_empty() {
            in_table = false;
        } else if cells[0] == first {
            in_table = true;
        } else if in_table && !cells[0].starts_with("---") {
            rows.push(cells);
        }
    }
    rows
}

fn edge_letter(kind: EdgeKind) -> char {
    match kind {
        EdgeKind::Field => 'F',
        EdgeKind::Road => 'R',
        EdgeKind::City => 'C',
        EdgeKind::Water => 'W',
        EdgeKind::Wall => '-',
    }
}

fn dir_bits(edges: &str) -> u8 {
    edges
        .chars()
        .filter(|c| *c != '-')
        .map(|c| {
            let dir = Dir::from_name(&c.to_string()).unwrap_or_else(|| panic!("edge {c:?}"));
            1 << dir.index()
        })
        .sum()
}

fn half_bits(halves: &str) -> u8 {
    halves
        .split_whitespace()
        .map(|h| {
            let half = Half::from_name(h).unwrap_or_else(|| panic!("half-edge {h:?}"));
            1 << half.index()
        })
        .sum()
}

fn entries(cell: &str) -> Vec<&str> {
    if cell == "–" {
        Vec::new()
    } else {
        cell.split(';').map(str::trim).collect()
    }
}

/// A tile as the docs describe it, in comparable form: cities (edges,
/// pennant), roads (edges), cloister, fields (half-edges, the edges of
/// the cities they border).
type Described = (
    BTreeSet<(u8, bool)>,
    BTreeSet<u8>,
    bool,
    BTreeSet<(u8, BTreeSet<u8>)>,
);

fn described(cities: &str, roads: &str, cloister: bool, fields: &str) -> Described {
    let cities = entries(cities)
        .into_iter()
        .map(|c| match c.strip_suffix(" + pennant") {
            Some(edges) => (dir_bits(edges), true),
            None => (dir_bits(c), false),
        })
        .collect();
    let roads = entries(roads).into_iter().map(dir_bits).collect();
    let fields = entries(fields)
        .into_iter()
        .map(|f| {
            let (halves, borders) = f.split_once(" -> ").unwrap_or((f, ""));
            let halves = halves
                .strip_prefix('{')
                .and_then(|h| h.strip_suffix('}'))
                .unwrap_or_else(|| panic!("field {f:?}"));
            let borders = borders
                .split(',')
                .map(str::trim)
                .filter(|b| !b.is_empty())
                .map(dir_bits)
                .collect();
            (half_bits(halves), borders)
        })
        .collect();
    (cities, roads, cloister, fields)
}

fn catalogued(def: &TileDef) -> Described {
    let of = |kind: FeatureKind| def.segments.iter().filter(move |s| s.kind == kind);
    let cities = of(FeatureKind::City).map(|s| (s.edges, s.pennant)).collect();
    let roads = of(FeatureKind::Road).map(|s| s.edges).collect();
    let fields = of(FeatureKind::Field)
        .map(|s| {
            let borders = (0..def.segments.len())
                .filter(|i| s.cities & (1 << i) != 0)
                .map(|i| def.segments[i].edges)
                .collect();
            (s.halves, borders)
        })
        .collect();
    (cities, roads, def.cloister.is_some(), fields)
}

fn edges_of(def: &TileDef) -> String {
    def.rotations[0].edges.iter().map(|e| edge_letter(*e)).collect()
}

/// A tile's picture, drawn by `carcassonne-picture` into `docs/tiles/`.
fn picture(name: &str) -> String {
    format!("![{name}](tiles/{name}.svg)")
}

#[test]
fn the_tile_tables_of_tiles_md_are_the_catalogue() {
    let mut seen = Vec::new();
    let counts: Vec<(&str, u8)> = BASE_COUNTS.iter().chain(&RIVER_COUNTS).copied().collect();
    for (header, river) in [("kind", false), ("kind", true)] {
        // The last column is the tile's picture.
        let width = if river { 9 } else { 8 };
        for row in table_rows(TILES_MD, header)
            .into_iter()
            .filter(|r| r.len() == width)
        {
            let (name, count, edges) = (row[0], row[1], row[2]);
            let def = TileKind::from_name(name)
                .unwrap_or_else(|| panic!("no kind {name}"))
                .def();
            let extra = usize::from(river);
            let (cities, roads, cloister, fields) =
                (row[3 + extra], row[4 + extra], row[5 + extra], row[6 + extra]);
            assert_eq!(edges.replace(' ', ""), edges_of(def), "{name}: edges");
            let expected = counts
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, c)| c.to_string());
            assert_eq!(Some(count.to_string()), expected, "{name}: count");
            assert_eq!(
                described(cities, roads, cloister == "yes", fields),
                catalogued(def),
                "{name}: segments"
            );
            if river {
                let water: String = row[3]
                    .split(|c: char| c == '-' || c == ',' || c.is_whitespace())
                    .filter(|w| Dir::from_name(w).is_some())
                    .collect();
                let water_edges: String = Dir::ALL
                    .into_iter()
                    .filter(|d| def.rotations[0].edges[d.index()] == EdgeKind::Water)
                    .map(Dir::name)
                    .collect();
                assert_eq!(dir_bits(&water), dir_bits(&water_edges), "{name}: river");
            }
            assert_eq!(row[width - 1], picture(name), "{name}: picture");
            seen.push(name);
        }
    }
    for row in table_rows(TILES_MD, "tile") {
        let [name, at, outer, cities, roads, fields, shown] = row[..] else {
            panic!("city tile row {row:?}");
        };
        assert_eq!(shown, picture(name), "{name}: picture");
        let def = TileKind::from_name(name)
            .unwrap_or_else(|| panic!("no kind {name}"))
            .def();
        let layout = CITY_LAYOUT
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, x, y)| format!("({x}, {y})"));
        assert_eq!(Some(at.to_string()), layout, "{name}: where it lies");
        let mut edges = ['-'; 4];
        for edge in entries(&outer.replace(", ", "; ")) {
            let (dir, letter) = edge.split_once(' ').unwrap_or_else(|| panic!("{name}: {edge:?}"));
            let dir = Dir::from_name(dir).unwrap_or_else(|| panic!("{name}: {edge:?}"));
            edges[dir.index()] = letter.chars().next().unwrap_or('?');
        }
        assert_eq!(edges.iter().collect::<String>(), edges_of(def), "{name}: edges");
        assert_eq!(described(cities, roads, false, fields), catalogued(def), "{name}");
        assert!(def.city_of_carcassonne, "{name}: part of the City (C-11)");
        seen.push(name);
    }
    let catalogue: Vec<&str> = TileKind::all().map(TileKind::name).collect();
    seen.sort_unstable();
    let mut all = catalogue.clone();
    all.sort_unstable();
    assert_eq!(seen, all, "every kind once in docs/tiles.md");
}

/// The ids that docs/tiles.md and docs/record-format.md mention are rules
/// of docs/rules.md.
#[test]
fn the_tile_and_record_documents_cite_only_rules_of_rules_md() {
    let defined = defined_rule_ids();
    for (doc, text) in [
        ("docs/tiles.md", TILES_MD),
        ("docs/record-format.md", RECORD_FORMAT_MD),
    ] {
        let unknown: Vec<&str> = mentioned_rule_ids(text)
            .into_iter()
            .filter(|id| !defined.contains(id))
            .collect();
        assert!(
            unknown.is_empty(),
            "{doc} cites ids docs/rules.md lacks: {unknown:?}"
        );
    }
}
