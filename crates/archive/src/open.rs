//! Opening an archive: every check, in a fixed order, and the first that
//! fails named.

use std::collections::HashMap;
use std::io::Read as _;

use crate::manifest::Manifest;
use crate::{ArchiveError, MANIFEST, PublicKey, SIGNATURE, sha256_hex, unhex};

/// What opening an archive found ([`Archive::check`]): each check, held
/// or not.
#[derive(Debug, Clone)]
pub struct Opening {
    /// The manifest, or why the tar or the manifest cannot be read: then
    /// no other check ran.
    pub manifest: Result<Manifest, ArchiveError>,
    /// The signature's check (with the expected key's, if one was given):
    /// the key that signed, or why not.
    pub signature: Option<Result<PublicKey, ArchiveError>>,
    /// Each listed file's check, in the manifest's order (its path and
    /// size when it held), then a failure for each file the manifest does
    /// not list.
    pub files: Vec<Result<(String, u64), ArchiveError>>,
    /// The archive, when every check held; else the first that did not.
    pub archive: Result<Archive, ArchiveError>,
}

/// An archive whose signature and every file checked out.
#[derive(Debug, Clone)]
pub struct Archive {
    manifest: Manifest,
    server_key: PublicKey,
    /// The listed files, in the manifest's order.
    files: Vec<(String, Vec<u8>)>,
}

impl Archive {
    /// Checks `bytes` as an archive, in this order, and names the first
    /// failure:
    ///
    /// 1. a readable tar of plain files ([`ArchiveError::NotATar`],
    ///    [`ArchiveError::NotAFile`]);
    /// 2. `manifest.json` present once and parsable
    ///    ([`ArchiveError::MissingManifest`], [`ArchiveError::BadManifest`]);
    /// 3. its format ([`ArchiveError::UnknownFormat`]);
    /// 4. `signature` present once and valid for the manifest's
    ///    `server_key` ([`ArchiveError::MissingSignature`],
    ///    [`ArchiveError::BadSignature`], ...);
    /// 5. if `expected_key` is given, `server_key` is it
    ///    ([`ArchiveError::WrongKey`]): without it, the signature proves
    ///    only that whoever holds the named key signed;
    /// 6. every listed file present once with its size and SHA-256, in the
    ///    manifest's order ([`ArchiveError::MissingFile`],
    ///    [`ArchiveError::SizeMismatch`], [`ArchiveError::HashMismatch`]);
    /// 7. no file the manifest does not list ([`ArchiveError::UnlistedFile`]).
    pub fn open(bytes: &[u8], expected_key: Option<&PublicKey>) -> Result<Archive, ArchiveError> {
        Archive::check(bytes, expected_key).archive
    }

    /// Every check of [`Archive::open`], in its order, each that can run:
    /// when the tar or the manifest cannot be read, nothing after; else
    /// the signature and the expected key (one check), every listed file
    /// (one check each, whether the signature held or not) and each file
    /// the manifest does not list. The archive, when every check held;
    /// else the first failure, as [`Archive::open`] answers.
    pub fn check(bytes: &[u8], expected_key: Option<&PublicKey>) -> Opening {
        let failed = |error: ArchiveError| Opening {
            manifest: Err(error.clone()),
            signature: None,
            files: Vec::new(),
            archive: Err(error),
        };
        let entries = match read_tar(bytes) {
            Ok(entries) => entries,
            Err(error) => return failed(error),
        };
        let mut by_path: HashMap<&str, Vec<&[u8]>> = HashMap::new();
        for (path, bytes) in &entries {
            by_path.entry(path.as_str()).or_default().push(bytes);
        }
        let once = |path: &str| -> Result<Option<&[u8]>, ArchiveError> {
            match by_path.get(path).map(Vec::as_slice) {
                None | Some([]) => Ok(None),
                Some([only]) => Ok(Some(only)),
                Some(many) => Err(ArchiveError::Duplicate {
                    path: path.to_owned(),
                    count: many.len(),
                }),
            }
        };

        let manifest = once(MANIFEST)
            .and_then(|bytes| bytes.ok_or(ArchiveError::MissingManifest))
            .and_then(|bytes| Ok((bytes, Manifest::parse(bytes)?)));
        let (manifest_bytes, manifest) = match manifest {
            Ok(read) => read,
            Err(error) => return failed(error),
        };

        let signature = check_signature(once(SIGNATURE), manifest_bytes, &manifest, expected_key);
        let mut checks = Vec::with_capacity(manifest.files.len());
        let mut files = Vec::with_capacity(manifest.files.len());
        for listed in &manifest.files {
            let path = listed.path.as_str();
            let file = once(path)
                .and_then(|bytes| bytes.ok_or_else(|| ArchiveError::MissingFile(path.to_owned())))
                .and_then(|bytes| {
                    if bytes.len() as u64 != listed.bytes {
                        return Err(ArchiveError::SizeMismatch {
                            path: path.to_owned(),
                            listed: listed.bytes,
                            actual: bytes.len() as u64,
                        });
                    }
                    let actual = sha256_hex(bytes);
                    if !actual.eq_ignore_ascii_case(&listed.sha256) {
                        return Err(ArchiveError::HashMismatch {
                            path: path.to_owned(),
                            listed: listed.sha256.clone(),
                            actual,
                        });
                    }
                    Ok(bytes)
                });
            checks.push(file.map(|bytes| {
                files.push((path.to_owned(), bytes.to_vec()));
                (path.to_owned(), listed.bytes)
            }));
        }
        checks.extend(
            entries
                .iter()
                .filter(|(path, _)| {
                    path != MANIFEST && path != SIGNATURE && !manifest.files.iter().any(|f| f.path == *path)
                })
                .map(|(path, _)| Err(ArchiveError::UnlistedFile(path.clone()))),
        );

        let first_file_failure = checks.iter().find_map(|check| check.as_ref().err());
        let archive = match (&signature, first_file_failure) {
            (Err(error), _) | (Ok(_), Some(error)) => Err(error.clone()),
            (Ok(server_key), None) => Ok(Archive {
                manifest: manifest.clone(),
                server_key: *server_key,
                files,
            }),
        };
        Opening {
            manifest: Ok(manifest),
            signature: Some(signature),
            files: checks,
            archive,
        }
    }

    /// The manifest, as signed.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The key that signed (the manifest's `server_key`).
    pub fn server_key(&self) -> &PublicKey {
        &self.server_key
    }

    /// The bytes of the file at `path`, if the manifest lists it.
    pub fn file(&self, path: &str) -> Option<&[u8]> {
        self.files
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, bytes)| bytes.as_slice())
    }

    /// The listed files' paths, in the manifest's order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|(p, _)| p.as_str())
    }
}

/// The signature's check: present once, well formed, valid for the
/// manifest's bytes and the key it names, and that key the expected one.
/// The key that signed, when all hold.
fn check_signature(
    signature: Result<Option<&[u8]>, ArchiveError>,
    manifest_bytes: &[u8],
    manifest: &Manifest,
    expected_key: Option<&PublicKey>,
) -> Result<PublicKey, ArchiveError> {
    let signature = signature?.ok_or(ArchiveError::MissingSignature)?;
    let signature = std::str::from_utf8(signature)
        .ok()
        .map(|text| text.strip_suffix('\n').unwrap_or(text))
        .and_then(unhex::<64>)
        .ok_or_else(|| ArchiveError::MalformedSignature("not 128 hex digits and a newline".to_owned()))?;
    let server_key =
        PublicKey::from_hex(&manifest.server_key).map_err(|e| ArchiveError::BadServerKey(e.to_string()))?;
    if !server_key.verifies(manifest_bytes, &signature) {
        return Err(ArchiveError::BadSignature {
            key: server_key.to_hex(),
        });
    }
    if let Some(expected) = expected_key
        && *expected != server_key
    {
        return Err(ArchiveError::WrongKey {
            signed_by: server_key.to_hex(),
            expected: expected.to_hex(),
        });
    }
    Ok(server_key)
}

/// The entries of a tar, in order, as they are: the tar layer of an archive
/// alone, checking nothing but that it is a readable tar of plain files.
pub fn read_tar(bytes: &[u8]) -> Result<Vec<(String, Vec<u8>)>, ArchiveError> {
    let not_a_tar = |e: std::io::Error| ArchiveError::NotATar(e.to_string());
    let mut archive = tar::Archive::new(bytes);
    let mut entries = Vec::new();
    for entry in archive.entries().map_err(not_a_tar)? {
        let mut entry = entry.map_err(not_a_tar)?;
        let path = entry.path().map_err(not_a_tar)?;
        let path = path
            .to_str()
            .ok_or_else(|| ArchiveError::NotATar("a path that is not UTF-8".to_owned()))?
            .to_owned();
        let kind = entry.header().entry_type();
        if !kind.is_file() {
            return Err(ArchiveError::NotAFile {
                path,
                kind: format!("{kind:?}").to_lowercase(),
            });
        }
        let size = entry.header().size().map_err(not_a_tar)?;
        let mut content = Vec::new();
        entry.read_to_end(&mut content).map_err(not_a_tar)?;
        if content.len() as u64 != size {
            return Err(ArchiveError::NotATar(format!(
                "{path}: cut short ({} of {size} bytes)",
                content.len()
            )));
        }
        entries.push((path, content));
    }
    if entries.is_empty() {
        return Err(ArchiveError::NotATar("no entries".to_owned()));
    }
    Ok(entries)
}
