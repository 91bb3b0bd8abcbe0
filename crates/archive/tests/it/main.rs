//! Archives as an auditor meets them: made, opened, and tampered with in
//! every way, each tampering caught and named.

#![allow(clippy::unwrap_used)]

mod tampering;

use carcassonne_archive::{Archive, ArchiveBuilder, Kind, SigningKey};

pub fn key(byte: u8) -> SigningKey {
    SigningKey::from_secret_bytes([byte; 32])
}

/// The files of a game's archive, as the server would put them.
pub fn files() -> Vec<(String, Vec<u8>)> {
    vec![
        (
            "games/g1/record.json".to_owned(),
            b"{\"format\": \"x\"}\n".to_vec(),
        ),
        ("games/g1/events.json".to_owned(), b"[]\n".to_vec()),
        (
            "games/g1/seed".to_owned(),
            format!("{}\n", "ab".repeat(32)).into_bytes(),
        ),
        (
            "games/g1/seed_sha256".to_owned(),
            format!("{}\n", "cd".repeat(32)).into_bytes(),
        ),
    ]
}

pub fn signed(files: &[(String, Vec<u8>)], key: &SigningKey) -> Vec<u8> {
    let mut builder = ArchiveBuilder::new(Kind::Game, "g1", 1_764_000_000_000);
    for (path, bytes) in files {
        builder.add(path.clone(), bytes.clone()).unwrap();
    }
    builder.sign(key).unwrap()
}

#[test]
fn an_archive_opens_with_every_file_and_its_manifest() {
    let key = key(1);
    let bytes = signed(&files(), &key);
    for expected in [None, Some(&key.public_key())] {
        let archive = Archive::open(&bytes, expected).unwrap();
        let manifest = archive.manifest();
        assert_eq!(manifest.format, "carcassonne-archive/1");
        assert_eq!(manifest.kind, Kind::Game);
        assert_eq!(manifest.subject, "g1");
        assert_eq!(manifest.created_at_ms, 1_764_000_000_000);
        assert_eq!(manifest.server_key, key.public_key_hex());
        assert_eq!(archive.server_key(), &key.public_key());
        let paths: Vec<&str> = archive.paths().collect();
        assert_eq!(paths, files().iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>());
        for (path, content) in files() {
            assert_eq!(archive.file(&path), Some(content.as_slice()));
            let listed = manifest.files.iter().find(|f| f.path == path).unwrap();
            assert_eq!(listed.bytes, content.len() as u64);
        }
        assert_eq!(archive.file("games/g1/other"), None);
    }
}

#[test]
fn an_archive_without_files_is_still_signed() {
    let key = key(2);
    let bytes = ArchiveBuilder::new(Kind::Tournament, "t", 0).sign(&key).unwrap();
    let archive = Archive::open(&bytes, Some(&key.public_key())).unwrap();
    assert_eq!(archive.paths().count(), 0);
    assert_eq!(archive.manifest().kind, Kind::Tournament);
}

#[test]
fn a_large_file_round_trips() {
    let key = key(3);
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let bytes = signed(&[("big".to_owned(), big.clone())], &key);
    let archive = Archive::open(&bytes, None).unwrap();
    assert_eq!(archive.file("big"), Some(big.as_slice()));
}
