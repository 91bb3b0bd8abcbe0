use crate::*;

fn key(byte: u8) -> SigningKey {
    SigningKey::from_secret_bytes([byte; 32])
}

#[test]
fn hex_round_trips_and_refuses_what_is_not_hex() {
    let bytes = [0x00, 0x7f, 0x80, 0xff, 0x1a];
    assert_eq!(hex(&bytes), "007f80ff1a");
    assert_eq!(unhex::<5>("007F80ff1a"), Some(bytes));
    assert_eq!(unhex::<5>("007f80ff1"), None);
    assert_eq!(unhex::<5>("007f80ff1g"), None);
    assert_eq!(unhex::<2>("+1+1"), None);
}

#[test]
fn sha256_is_the_standard_one() {
    assert_eq!(
        sha256_hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

#[test]
fn a_key_file_round_trips_and_holds_its_public_key() {
    let key = key(1);
    let text = key.to_file_text();
    assert!(text.contains(&key.public_key_hex()));
    let read = SigningKey::from_file_text(&text).unwrap();
    assert_eq!(read.public_key(), key.public_key());
    assert_eq!(read.sign(b"m"), key.sign(b"m"));
}

#[test]
fn rfc_8032_test_vector_1() {
    let secret = unhex::<32>("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60").unwrap();
    let key = SigningKey::from_secret_bytes(secret);
    assert_eq!(
        key.public_key_hex(),
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"
    );
    assert_eq!(
        hex(&key.sign(b"")),
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155\
         5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
    );
}

#[test]
fn a_damaged_key_file_is_refused_without_quoting_its_secret() {
    let key = key(2);
    let text = key.to_file_text();
    let secret = hex(&[2; 32]);
    // One digit of the secret changed: another valid key, whose public key
    // is not the file's.
    let changed = text.replacen(&secret, &format!("03{}", &secret[2..]), 1);
    assert_eq!(
        SigningKey::from_file_text(&changed).unwrap_err(),
        KeyError::Mismatch
    );
    // One digit of the public key changed.
    let public = key.public_key_hex();
    let flipped = if public.starts_with('0') { "1" } else { "0" };
    let changed = text.replacen(&public, &format!("{flipped}{}", &public[1..]), 1);
    assert_eq!(
        SigningKey::from_file_text(&changed).unwrap_err(),
        KeyError::Mismatch
    );
    // Cut short, emptied, garbage, another format, a line twice.
    let cut = &text[..text.len() - 40];
    for bad in [
        cut.to_owned(),
        String::new(),
        "garbage".to_owned(),
        text.replace("carcassonne-key/1", "carcassonne-key/2"),
        format!("{text}{}", text.lines().nth(2).unwrap()),
        text.replacen(&secret, &secret[..62], 1),
    ] {
        let error = SigningKey::from_file_text(&bad).unwrap_err();
        assert!(
            matches!(error, KeyError::Malformed(_) | KeyError::Mismatch),
            "{error}"
        );
        assert!(!error.to_string().contains(&secret[..16]), "{error}");
    }
}

#[test]
fn a_signing_key_never_prints_its_secret() {
    let key = key(9);
    let secret = hex(&[9; 32]);
    let shown = format!("{key:?}");
    assert!(!shown.contains(&secret));
    assert!(shown.contains(&key.public_key_hex()));
}

#[test]
fn public_keys_parse_from_hex_of_either_case() {
    let public = key(3).public_key();
    assert_eq!(
        PublicKey::from_hex(&public.to_hex().to_uppercase()).unwrap(),
        public
    );
    assert_eq!(PublicKey::from_hex(&format!(" {public}\n")).unwrap(), public);
    assert!(matches!(
        PublicKey::from_hex("abc"),
        Err(KeyError::BadPublicKey(_))
    ));
}

#[test]
fn paths_are_relative_plain_and_not_the_archives_own() {
    for good in ["games/g1/record.json", "a", "tournaments/t-1/events.json"] {
        assert_eq!(check_path(good), Ok(()), "{good}");
    }
    for bad in [
        "",
        "/etc/passwd",
        "games/../x",
        "./x",
        "a//b",
        "a/",
        "a b",
        "a\\b",
        "é",
        "manifest.json",
        "signature",
        &"x".repeat(256),
    ] {
        assert!(check_path(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn the_builder_refuses_bad_and_repeated_paths() {
    let mut builder = ArchiveBuilder::new(Kind::Game, "g", 0);
    assert!(matches!(
        builder.add("../x", vec![]),
        Err(ArchiveError::BadPath { .. })
    ));
    builder.add("x", vec![1]).unwrap();
    assert_eq!(
        builder.add("x", vec![2]).unwrap_err(),
        ArchiveError::DuplicatePath("x".to_owned())
    );
    assert_eq!(builder.paths().collect::<Vec<_>>(), ["x"]);
}

#[test]
fn the_manifest_is_written_canonically() {
    let mut builder = ArchiveBuilder::new(Kind::Tournament, "t1", 42);
    builder.add("b", b"abc".to_vec()).unwrap();
    let key = key(4);
    let bytes = builder.sign(&key).unwrap();
    let entries = read_tar(&bytes).unwrap();
    let names: Vec<&str> = entries.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(names, ["manifest.json", "b", "signature"]);
    let manifest = String::from_utf8(entries[0].1.clone()).unwrap();
    assert_eq!(
        manifest,
        format!(
            "{{\n  \"format\": \"carcassonne-archive/1\",\n  \"kind\": \"tournament\",\n  \
             \"subject\": \"t1\",\n  \"created_at_ms\": 42,\n  \"server_key\": \"{}\",\n  \
             \"files\": [\n    {{\n      \"path\": \"b\",\n      \"sha256\": \
             \"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\",\n      \
             \"bytes\": 3\n    }}\n  ]\n}}\n",
            key.public_key_hex()
        )
    );
    let signature = String::from_utf8(entries[2].1.clone()).unwrap();
    assert_eq!(signature.len(), 129);
    assert!(signature.ends_with('\n'));
}

#[test]
fn the_same_files_make_the_same_bytes_with_deterministic_headers() {
    let make = || {
        let mut builder = ArchiveBuilder::new(Kind::Game, "g", 7);
        builder.add("games/g/seed", b"00\n".to_vec()).unwrap();
        builder.sign(&key(5)).unwrap()
    };
    let bytes = make();
    assert_eq!(bytes, make());
    let mut tar = tar::Archive::new(bytes.as_slice());
    for entry in tar.entries().unwrap() {
        let entry = entry.unwrap();
        let header = entry.header();
        assert!(header.as_ustar().is_some());
        assert_eq!(header.mtime().unwrap(), 0);
        assert_eq!(header.mode().unwrap(), 0o644);
        assert_eq!((header.uid().unwrap(), header.gid().unwrap()), (0, 0));
        assert_eq!(header.username().unwrap(), Some(""));
        assert_eq!(header.groupname().unwrap(), Some(""));
    }
}

#[test]
fn errors_name_the_file_they_are_about() {
    assert_eq!(ArchiveError::MissingManifest.path(), Some(MANIFEST));
    assert_eq!(ArchiveError::MissingFile("a/b".to_owned()).path(), Some("a/b"));
    assert_eq!(
        ArchiveError::WrongKey {
            signed_by: String::new(),
            expected: String::new()
        }
        .path(),
        Some(SIGNATURE)
    );
    assert_eq!(ArchiveError::NotATar(String::new()).path(), None);
}
