//! PNG output: a real PNG of the picture's own size, and errors (not
//! panics) for what cannot be drawn.

use carcassonne_picture::{BoardOptions, PIXELS_PER_UNIT, board_svg, rasterise, svg_to_png, tile_sheet_svg};

use crate::support::{game_after, shared_record};

/// The width and height in a PNG's header.
fn png_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    let be = |at: usize| u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]);
    (be(16), be(20))
}

#[test]
fn a_board_png_has_the_size_the_svg_states() {
    let game = game_after(&shared_record("river-3p.json"), None);
    let svg = board_svg(&game, &BoardOptions::default());
    let png = svg_to_png(&svg).unwrap();
    let (width, height) = png_size(&png);
    let stated = |name: &str| -> u32 {
        let at = svg.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        svg[at..].split('"').next().unwrap().parse().unwrap()
    };
    assert_eq!((width, height), (stated("width"), stated("height")));
    // 80 pixels a tile.
    assert_eq!(PIXELS_PER_UNIT * 100.0, 80.0);
    let raster = rasterise(&svg, 1.0).unwrap();
    assert_eq!((raster.width, raster.height), (width, height));
}

/// The colour type in a PNG's header: 2 RGB, 6 RGBA.
fn png_colour_type(png: &[u8]) -> u8 {
    png[25]
}

#[test]
fn an_opaque_picture_is_an_rgb_png_and_a_transparent_one_keeps_its_alpha() {
    let game = game_after(&shared_record("base-2p.json"), Some(3));
    let board = svg_to_png(&board_svg(&game, &BoardOptions::default())).unwrap();
    assert_eq!(png_colour_type(&board), 2);
    let half = r##"<svg xmlns="http://www.w3.org/2000/svg" width="4" height="2"><rect width="2" height="2" fill="#ff0000" fill-opacity="0.5"/></svg>"##;
    let png = svg_to_png(half).unwrap();
    assert_eq!(png_colour_type(&png), 6);
}

#[test]
fn the_tile_sheet_rasterises() {
    let png = svg_to_png(&tile_sheet_svg()).unwrap();
    let (width, height) = png_size(&png);
    assert!(width > 800 && height > 600, "{width} x {height}");
}

#[test]
fn the_tile_sheets_png_shows_each_tiles_name() {
    // The band under the first row of tiles (14 units of margin, 100 of
    // tile, then the names), and under each tile the ink of its name.
    let raster = rasterise(&tile_sheet_svg(), 1.0).unwrap();
    let ink = |x0: u32, x1: u32| {
        (x0..x1)
            .flat_map(|x| (117..131).map(move |y| (x, y)))
            .filter(|&(x, y)| {
                raster
                    .pixel(x, y)
                    .is_some_and(|p| p[..3].iter().all(|&c| c < 110))
            })
            .count()
    };
    for column in 0..8 {
        let left = 14 + column * 114;
        let name = ink(left, left + 100);
        assert!(
            name > 20,
            "tile {column} of the first row: {name} pixels of ink under it"
        );
    }
    // Between two tiles' names, none.
    assert_eq!(ink(116, 126), 0);
}

#[test]
fn what_is_no_svg_or_too_large_is_an_error() {
    assert!(svg_to_png("not an svg").is_err());
    let huge = r#"<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="10" viewBox="0 0 1 1"/>"#;
    let error = svg_to_png(huge).unwrap_err();
    assert!(error.to_string().contains("too large"), "{error}");
    // Within the side limit, beyond the pixel limit (8000 x 8000).
    let square = r#"<svg xmlns="http://www.w3.org/2000/svg" width="8000" height="8000" viewBox="0 0 1 1"/>"#;
    assert!(svg_to_png(square).unwrap_err().to_string().contains("too large"));
}
