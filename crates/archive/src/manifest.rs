//! The manifest: what an archive is of, who made it, and every file with
//! its size and SHA-256. Written canonically: its keys in the order of the
//! structs below, pretty JSON with two spaces, one newline at the end.

use serde::{Deserialize, Serialize};

use crate::{ArchiveError, FORMAT, MANIFEST, SIGNATURE};

/// What an archive holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// One finished game.
    Game,
    /// A tournament: its events, its games and what they add up to.
    Tournament,
}

impl Kind {
    /// The manifest's word for it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Game => "game",
            Kind::Tournament => "tournament",
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    pub kind: Kind,
    /// The game's or tournament's id.
    pub subject: String,
    /// When the archive was made, in ms since the Unix epoch (the server's
    /// clock; it signs nothing about the games' own times, which their
    /// files hold).
    pub created_at_ms: u64,
    /// The Ed25519 public key of the server that signed, 64 lowercase hex
    /// digits.
    pub server_key: String,
    /// Every file of the archive but the manifest and the signature, in
    /// the order of the tar.
    pub files: Vec<FileEntry>,
}

/// A file of the archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileEntry {
    pub path: String,
    /// SHA-256 of its bytes, 64 lowercase hex digits.
    pub sha256: String,
    /// Its size.
    pub bytes: u64,
}

impl Manifest {
    /// The canonical bytes, which the signature covers.
    pub(crate) fn to_bytes(&self) -> Result<Vec<u8>, ArchiveError> {
        let mut bytes = serde_json::to_vec_pretty(self).map_err(|e| ArchiveError::Tar(e.to_string()))?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// The manifest of `bytes`: JSON first, then its format, then its
    /// fields and every path in it (each valid, none twice).
    pub(crate) fn parse(bytes: &[u8]) -> Result<Manifest, ArchiveError> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| ArchiveError::BadManifest(e.to_string()))?;
        match value.get("format") {
            Some(serde_json::Value::String(format)) if format == FORMAT => {}
            Some(serde_json::Value::String(format)) => {
                return Err(ArchiveError::UnknownFormat {
                    found: format.chars().take(64).collect(),
                });
            }
            _ => return Err(ArchiveError::BadManifest("no \"format\" string".to_owned())),
        }
        let manifest: Manifest =
            serde_json::from_value(value).map_err(|e| ArchiveError::BadManifest(e.to_string()))?;
        let mut seen = std::collections::HashSet::new();
        for (i, file) in manifest.files.iter().enumerate() {
            let at = |what: String| ArchiveError::BadManifest(format!("files[{i}]: {what}"));
            check_path(&file.path).map_err(|reason| at(format!("{:?}: {reason}", file.path)))?;
            if !seen.insert(file.path.as_str()) {
                return Err(at(format!("{:?} is listed twice", file.path)));
            }
            if crate::unhex::<32>(&file.sha256).is_none() {
                return Err(at("sha256 is not 64 hex digits".to_owned()));
            }
        }
        Ok(manifest)
    }
}

/// The longest path of a file in an archive, in bytes: what a ustar header
/// holds (a prefix of up to 155 bytes, a `/`, a name of up to 100).
pub const MAX_PATH: usize = 255;

/// Whether `path` may name a file of an archive: relative, its parts
/// separated by `/`, none empty, `.` or `..`, printable ASCII without
/// spaces or backslashes, at most [`MAX_PATH`] bytes, and neither
/// `manifest.json` nor `signature`. Says why not.
pub fn check_path(path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err("empty".to_owned());
    }
    if path.len() > MAX_PATH {
        return Err(format!("{} bytes, at most {MAX_PATH}", path.len()));
    }
    if let Some(c) = path.chars().find(|c| !c.is_ascii_graphic() || *c == '\\') {
        return Err(format!(
            "{c:?}: only printable ASCII without spaces or backslashes"
        ));
    }
    if path.starts_with('/') {
        return Err("absolute: an archive's paths are relative".to_owned());
    }
    for part in path.split('/') {
        match part {
            "" => return Err("an empty part (\"//\" or a trailing \"/\")".to_owned()),
            "." | ".." => return Err(format!("a part {part:?}")),
            _ => {}
        }
    }
    if path == MANIFEST || path == SIGNATURE {
        return Err("the archive's own manifest or signature".to_owned());
    }
    Ok(())
}
