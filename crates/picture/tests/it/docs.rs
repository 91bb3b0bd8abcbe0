//! `docs/tiles/<KIND>.svg`: each tile kind's picture, shown beside its
//! description in `docs/tiles.md`, is what the renderer draws now
//! (regenerate on purpose with
//! `UPDATE_PICTURES=1 cargo test -p carcassonne-picture`).

use carcassonne_engine::{Rotation, TileKind};
use carcassonne_picture::tile_svg;

use crate::support::{check_golden, crate_dir, report};

#[test]
fn the_tile_pictures_of_the_docs_are_what_the_renderer_draws() {
    let docs = crate_dir().join("../../docs");
    let mut complaints = Vec::new();
    for kind in TileKind::all() {
        let path = docs.join("tiles").join(format!("{}.svg", kind.name()));
        complaints.extend(check_golden(&path, &tile_svg(kind, Rotation::R0)));
    }
    let listed: Vec<String> = std::fs::read_dir(docs.join("tiles"))
        .map(|dir| {
            dir.filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
                .collect()
        })
        .unwrap_or_default();
    for file in listed {
        let kind = file.strip_suffix(".svg").and_then(TileKind::from_name);
        if kind.is_none() {
            complaints.push(format!("docs/tiles/{file} is no tile kind's picture"));
        }
    }
    report(complaints);
}

#[test]
fn tiles_md_shows_each_kind_beside_its_description() {
    let text = std::fs::read_to_string(crate_dir().join("../../docs/tiles.md")).unwrap_or_default();
    let missing: Vec<&str> = TileKind::all()
        .map(TileKind::name)
        .filter(|name| {
            let row = format!("| {name} |");
            let picture = format!("![{name}](tiles/{name}.svg)");
            !text.lines().any(|l| l.starts_with(&row) && l.contains(&picture))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/tiles.md rows without their picture: {missing:?}"
    );
}
