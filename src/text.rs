//! Words for people, shared by the command line's outputs.

/// `1 tile`, `2 tiles`: a count with its noun, singular for one.
pub fn counted(n: u32, thing: &str) -> String {
    if n == 1 {
        format!("1 {thing}")
    } else {
        format!("{n} {thing}s")
    }
}
