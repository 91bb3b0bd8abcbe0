//! Writing SVG text: numbers with a fixed format (so the same picture is
//! always the same bytes), paths from outlines, escaped text.

use std::fmt::{self, Write as _};

use crate::geometry::{Line, Outline, Point, Step};

/// A number as SVG writes it: at most two decimals, no trailing zeros,
/// never `-0`.
#[derive(Clone, Copy)]
pub struct Num(pub f32);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hundredths = (f64::from(self.0) * 100.0).round() as i64;
        let (sign, abs) = if hundredths < 0 {
            ("-", -hundredths)
        } else {
            ("", hundredths)
        };
        let (whole, frac) = (abs / 100, abs % 100);
        match frac {
            0 => write!(f, "{sign}{whole}"),
            _ if frac % 10 == 0 => write!(f, "{sign}{whole}.{}", frac / 10),
            _ => write!(f, "{sign}{whole}.{frac:02}"),
        }
    }
}

/// A point as `x,y`.
pub struct Pt(pub Point);

impl fmt::Display for Pt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", Num(self.0.0), Num(self.0.1))
    }
}

fn step(out: &mut String, step: &Step) {
    let _ = match step {
        Step::Line(p) => write!(out, "L{}", Pt(*p)),
        Step::Quad(c, p) => write!(out, "Q{} {}", Pt(*c), Pt(*p)),
        Step::Cubic(c1, c2, p) => write!(out, "C{} {} {}", Pt(*c1), Pt(*c2), Pt(*p)),
    };
}

/// The path data of a closed outline.
pub fn outline_path(outline: &Outline) -> String {
    let mut out = format!("M{}", Pt(outline.start));
    for s in &outline.steps {
        step(&mut out, s);
    }
    out.push('Z');
    out
}

/// The path data of an outline's walls (open curves).
pub fn walls_path(outline: &Outline) -> String {
    let mut out = String::new();
    for (from, s) in &outline.walls {
        let _ = write!(out, "M{}", Pt(*from));
        step(&mut out, s);
    }
    out
}

pub fn line_path(line: &Line) -> String {
    let mut out = format!("M{}", Pt(line.start));
    step(&mut out, &line.step);
    out
}

/// Text escaped for SVG content and attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out
}
