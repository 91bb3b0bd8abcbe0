//! Every way of changing an archive after it was signed is caught, and the
//! error names what does not hold.

use carcassonne_archive::{Archive, ArchiveError, read_tar, write_tar};

use crate::{files, key, signed};

/// The tar entries of a genuine archive signed by key 1, changed by
/// `change`, written back without signing again.
fn tampered(change: impl FnOnce(&mut Vec<(String, Vec<u8>)>)) -> Vec<u8> {
    let mut entries = read_tar(&signed(&files(), &key(1))).unwrap();
    change(&mut entries);
    write_tar(&entries).unwrap()
}

fn open(bytes: &[u8]) -> ArchiveError {
    Archive::open(bytes, Some(&key(1).public_key())).unwrap_err()
}

fn entry<'a>(entries: &'a mut [(String, Vec<u8>)], path: &str) -> &'a mut Vec<u8> {
    &mut entries.iter_mut().find(|(p, _)| p == path).unwrap().1
}

#[test]
fn a_changed_byte_in_a_file_is_named_by_its_hash() {
    let bytes = tampered(|entries| entry(entries, "games/g1/seed")[0] ^= 1);
    let error = open(&bytes);
    assert!(
        matches!(&error, ArchiveError::HashMismatch { path, .. } if path == "games/g1/seed"),
        "{error}"
    );
    assert_eq!(error.path(), Some("games/g1/seed"));
    assert!(
        error.to_string().starts_with("games/g1/seed: its SHA-256 is "),
        "{error}"
    );
}

#[test]
fn a_file_grown_or_cut_is_named_by_its_size() {
    let bytes = tampered(|entries| entry(entries, "games/g1/events.json").push(b' '));
    assert_eq!(
        open(&bytes),
        ArchiveError::SizeMismatch {
            path: "games/g1/events.json".to_owned(),
            listed: 3,
            actual: 4
        }
    );
}

#[test]
fn a_removed_file_is_named() {
    let bytes = tampered(|entries| entries.retain(|(p, _)| p != "games/g1/record.json"));
    assert_eq!(
        open(&bytes),
        ArchiveError::MissingFile("games/g1/record.json".to_owned())
    );
}

#[test]
fn an_added_file_is_named() {
    let bytes = tampered(|entries| entries.insert(2, ("games/g1/extra".to_owned(), b"x".to_vec())));
    assert_eq!(
        open(&bytes),
        ArchiveError::UnlistedFile("games/g1/extra".to_owned())
    );
}

#[test]
fn a_file_given_twice_is_named() {
    let bytes = tampered(|entries| {
        let seed = entries[3].clone();
        entries.push(seed);
    });
    assert_eq!(
        open(&bytes),
        ArchiveError::Duplicate {
            path: "games/g1/seed".to_owned(),
            count: 2
        }
    );
}

#[test]
fn a_changed_manifest_breaks_the_signature() {
    // The time changed, and then a file's hash changed in the manifest to
    // go with a changed file: the signature catches both.
    let bytes = tampered(|entries| {
        let manifest = entry(entries, "manifest.json");
        let text = String::from_utf8(manifest.clone()).unwrap();
        *manifest = text.replace("1764000000000", "1764000000001").into_bytes();
    });
    let error = open(&bytes);
    assert!(matches!(error, ArchiveError::BadSignature { .. }), "{error}");
    assert_eq!(error.path(), Some("signature"));
    assert!(error.to_string().contains("the manifest was changed"), "{error}");
}

#[test]
fn a_missing_or_malformed_signature_is_named() {
    let bytes = tampered(|entries| entries.retain(|(p, _)| p != "signature"));
    assert_eq!(open(&bytes), ArchiveError::MissingSignature);
    let bytes = tampered(|entries| entry(entries, "signature").truncate(20));
    assert!(matches!(open(&bytes), ArchiveError::MalformedSignature(_)));
}

#[test]
fn a_signature_by_another_key_is_caught_with_or_without_an_expected_key() {
    // Another key's signature over the genuine manifest, which names key 1.
    let forged = signed(&files(), &key(2));
    let bytes = tampered(|entries| {
        let other = read_tar(&forged).unwrap();
        *entry(entries, "signature") = other.last().unwrap().1.clone();
    });
    assert!(matches!(open(&bytes), ArchiveError::BadSignature { .. }));
    assert!(matches!(
        Archive::open(&bytes, None),
        Err(ArchiveError::BadSignature { .. })
    ));
}

#[test]
fn an_archive_signed_by_another_key_is_refused_when_a_key_is_expected() {
    // A whole archive made and signed by key 2: it checks out on its own,
    // and only the expected key tells it apart.
    let bytes = signed(&files(), &key(2));
    assert!(Archive::open(&bytes, None).is_ok());
    let error = open(&bytes);
    assert_eq!(
        error,
        ArchiveError::WrongKey {
            signed_by: key(2).public_key_hex(),
            expected: key(1).public_key_hex()
        }
    );
    assert_eq!(
        error.to_string(),
        format!(
            "signature: signed by key {}, expected {}",
            key(2).public_key_hex(),
            key(1).public_key_hex()
        )
    );
}

#[test]
fn a_manifest_missing_unreadable_or_of_another_format_is_named() {
    let bytes = tampered(|entries| {
        entries.remove(0);
    });
    assert_eq!(open(&bytes), ArchiveError::MissingManifest);
    let bytes = tampered(|entries| *entry(entries, "manifest.json") = b"{not json".to_vec());
    assert!(matches!(open(&bytes), ArchiveError::BadManifest(_)));
    let bytes = tampered(|entries| {
        let manifest = entry(entries, "manifest.json");
        let text = String::from_utf8(manifest.clone()).unwrap();
        *manifest = text
            .replace("carcassonne-archive/1", "carcassonne-archive/9")
            .into_bytes();
    });
    assert_eq!(
        open(&bytes),
        ArchiveError::UnknownFormat {
            found: "carcassonne-archive/9".to_owned()
        }
    );
    let bytes = tampered(|entries| {
        let manifest = entry(entries, "manifest.json");
        let text = String::from_utf8(manifest.clone()).unwrap();
        *manifest = text.replace("games/g1/seed\"", "games/../seed\"").into_bytes();
    });
    let error = open(&bytes);
    assert!(
        matches!(&error, ArchiveError::BadManifest(m) if m.starts_with("files[2]")),
        "{error}"
    );
}

#[test]
fn garbage_is_not_a_tar() {
    for garbage in [
        Vec::new(),
        vec![0; 1024],
        b"hello, I am not an archive".to_vec(),
        (0..5000u32).map(|i| (i * 7 % 256) as u8).collect(),
    ] {
        let error = open(&garbage);
        assert!(matches!(error, ArchiveError::NotATar(_)), "{error}");
        assert_eq!(error.path(), None);
    }
    // A genuine archive cut in the middle of a file.
    let bytes = signed(&files(), &key(1));
    let error = open(&bytes[..600]);
    assert!(matches!(error, ArchiveError::NotATar(_)), "{error}");
}

#[test]
fn an_entry_that_is_no_plain_file_is_refused() {
    let mut bytes = signed(&files(), &key(1));
    // The type flag of the first entry, at offset 156 of its header, made a
    // directory, with the header's checksum made right again.
    bytes[156] = b'5';
    let mut header = [0u8; 512];
    header.copy_from_slice(&bytes[..512]);
    header[148..156].copy_from_slice(b"        ");
    let sum: u32 = header.iter().map(|&b| u32::from(b)).sum();
    bytes[148..156].copy_from_slice(format!("{sum:06o}\0 ").as_bytes());
    let error = open(&bytes);
    assert!(
        matches!(&error, ArchiveError::NotAFile { path, .. } if path == "manifest.json"),
        "{error}"
    );
}

#[test]
fn check_tells_every_check_held_or_not_and_open_the_first_failure() {
    // Two files changed and one added, signed by key 1, key 2 expected.
    let bytes = tampered(|entries| {
        entry(entries, "games/g1/events.json").push(b' ');
        entry(entries, "games/g1/seed")[0] ^= 1;
        entries.insert(1, ("extra".to_owned(), b"x".to_vec()));
    });
    let expected = key(2).public_key();
    let opening = Archive::check(&bytes, Some(&expected));
    assert_eq!(opening.manifest.as_ref().unwrap().subject, "g1");
    assert!(
        matches!(&opening.signature, Some(Err(ArchiveError::WrongKey { .. }))),
        "{:?}",
        opening.signature
    );
    let told: Vec<_> = opening
        .files
        .iter()
        .map(|file| match file {
            Ok((path, _)) => format!("ok {path}"),
            Err(error) => format!("failed {}", error.path().unwrap_or_default()),
        })
        .collect();
    assert_eq!(
        told,
        [
            "ok games/g1/record.json",
            "failed games/g1/events.json",
            "failed games/g1/seed",
            "ok games/g1/seed_sha256",
            "failed extra",
        ]
    );
    assert!(matches!(opening.archive, Err(ArchiveError::WrongKey { .. })));
    assert!(matches!(
        Archive::open(&bytes, Some(&expected)),
        Err(ArchiveError::WrongKey { .. })
    ));
    // With the right key, the first file that fails is open's answer.
    let opening = Archive::check(&bytes, Some(&key(1).public_key()));
    assert_eq!(opening.signature, Some(Ok(key(1).public_key())));
    assert!(
        matches!(&opening.archive, Err(ArchiveError::SizeMismatch { path, .. }) if path == "games/g1/events.json")
    );
    assert_eq!(open(&bytes), opening.archive.unwrap_err());

    // A genuine archive: every check held, and the archive.
    let opening = Archive::check(&signed(&files(), &key(1)), None);
    assert!(opening.files.iter().all(Result::is_ok));
    assert_eq!(opening.files.len(), 4);
    assert_eq!(opening.archive.unwrap().paths().count(), 4);
}
