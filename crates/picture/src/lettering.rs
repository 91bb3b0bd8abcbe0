//! Names drawn as strokes: capital letters and digits as lines on a grid,
//! so that a name reads the same in SVG and in a PNG, which has no text
//! (this crate loads no fonts). Enough for the catalogue's tile names
//! ("A", "RL", "CO12"); a character without a glyph is left out.

use std::fmt::Write as _;

use crate::svg::{Num, escape};

/// A glyph's box: 4 units wide, 6 high, y downwards from the top.
const WIDTH: f32 = 4.0;
const HEIGHT: f32 = 6.0;
/// Between two glyphs, in the same units.
const SPACING: f32 = 1.6;

/// Each glyph's strokes: polylines of `x,y` points, `|` between two.
fn strokes(c: char) -> Option<&'static str> {
    Some(match c {
        'A' => "0,6 2,0 4,6|0.67,4 3.33,4",
        'B' => "0,0 0,6 3,6 4,5 4,4 3,3 0,3|0,0 3,0 4,1 4,2 3,3",
        'C' => "4,1 3,0 1,0 0,1 0,5 1,6 3,6 4,5",
        'D' => "0,0 0,6 2.5,6 4,4.5 4,1.5 2.5,0 0,0",
        'E' => "4,0 0,0 0,6 4,6|0,3 3,3",
        'F' => "4,0 0,0 0,6|0,3 3,3",
        'G' => "4,1 3,0 1,0 0,1 0,5 1,6 3,6 4,5 4,3.5 2.5,3.5",
        'H' => "0,0 0,6|4,0 4,6|0,3 4,3",
        'I' => "1,0 3,0|2,0 2,6|1,6 3,6",
        'J' => "4,0 4,5 3,6 1,6 0,5",
        'K' => "0,0 0,6|4,0 0,3 4,6",
        'L' => "0,0 0,6 4,6",
        'M' => "0,6 0,0 2,3 4,0 4,6",
        'N' => "0,6 0,0 4,6 4,0",
        'O' => "1,0 3,0 4,1 4,5 3,6 1,6 0,5 0,1 1,0",
        'P' => "0,6 0,0 3,0 4,1 4,2 3,3 0,3",
        'Q' => "1,0 3,0 4,1 4,5 3,6 1,6 0,5 0,1 1,0|2.5,4.5 4,6",
        'R' => "0,6 0,0 3,0 4,1 4,2 3,3 0,3|2,3 4,6",
        'S' => "4,1 3,0 1,0 0,1 0,2 1,3 3,3 4,4 4,5 3,6 1,6 0,5",
        'T' => "0,0 4,0|2,0 2,6",
        'U' => "0,0 0,5 1,6 3,6 4,5 4,0",
        'V' => "0,0 2,6 4,0",
        'W' => "0,0 1,6 2,3 3,6 4,0",
        'X' => "0,0 4,6|4,0 0,6",
        'Y' => "0,0 2,3 4,0|2,3 2,6",
        'Z' => "0,0 4,0 0,6 4,6",
        // A slashed zero, unlike the O.
        '0' => "1,0 3,0 4,1 4,5 3,6 1,6 0,5 0,1 1,0|0.5,5 3.5,1",
        '1' => "0.8,1.2 2,0 2,6|1,6 3,6",
        '2' => "0,1 1,0 3,0 4,1 4,2 0,6 4,6",
        '3' => "0,1 1,0 3,0 4,1 4,2 3,3 4,4 4,5 3,6 1,6 0,5|1.5,3 3,3",
        '4' => "3,6 3,0 0,4 4,4",
        '5' => "4,0 0,0 0,3 3,3 4,4 4,5 3,6 1,6 0,5",
        '6' => "4,1 3,0 1,0 0,1 0,5 1,6 3,6 4,5 4,4 3,3 0,3",
        '7' => "0,0 4,0 1.5,6",
        '8' => "1,3 0,2 0,1 1,0 3,0 4,1 4,2 3,3 1,3 0,4 0,5 1,6 3,6 4,5 4,4 3,3",
        '9' => "0,5 1,6 3,6 4,5 4,1 3,0 1,0 0,1 0,2 1,3 4,3",
        '-' => "0.5,3 3.5,3",
        _ => return None,
    })
}

/// Whether every character of `text` has a glyph.
#[cfg(test)]
pub(crate) fn draws(text: &str) -> bool {
    text.chars().all(|c| strokes(c).is_some())
}

/// `text` as one stroked path, centred on `centre_x`, standing on
/// `baseline`, its capitals `height` high, in `colour`; the text itself as
/// its title, for screen readers and search.
pub(crate) fn lettering(
    out: &mut String,
    text: &str,
    (centre_x, baseline): (f32, f32),
    height: f32,
    colour: &str,
) {
    let scale = height / HEIGHT;
    let glyphs: Vec<&str> = text.chars().filter_map(strokes).collect();
    let width = (glyphs.len() as f32 * (WIDTH + SPACING) - SPACING).max(0.0) * scale;
    let (left, top) = (centre_x - width / 2.0, baseline - height);
    let mut d = String::new();
    for (i, glyph) in glyphs.iter().enumerate() {
        let x0 = left + i as f32 * (WIDTH + SPACING) * scale;
        for line in glyph.split('|') {
            for (j, point) in line.split(' ').enumerate() {
                let Some((x, y)) = point.split_once(',') else {
                    continue;
                };
                let (Ok(x), Ok(y)) = (x.parse::<f32>(), y.parse::<f32>()) else {
                    continue;
                };
                let _ = write!(
                    d,
                    "{}{},{}",
                    if j == 0 { 'M' } else { 'L' },
                    Num(x0 + x * scale),
                    Num(top + y * scale)
                );
            }
        }
    }
    let _ = write!(
        out,
        r#"<path d="{d}" fill="none" stroke="{colour}" stroke-width="{}" stroke-linecap="round" stroke-linejoin="round"><title>{}</title></path>"#,
        Num(height * 0.15),
        escape(text)
    );
}
