//! The registry of players, through its decisions and its fold.

use carcassonne_competition::*;

use crate::support::*;

fn key(n: u8) -> String {
    to_hex(&[n; 32])
}

/// Decides with `decide`, then applies the event.
fn exec(registry: &mut Registry, decide: impl FnOnce(&Registry) -> Result<RegistryEvent, RegistryError>) {
    let event = decide(registry).unwrap();
    registry.apply(&event);
}

#[test]
fn names_are_unique_regardless_of_case() {
    let mut registry = Registry::default();
    exec(&mut registry, |r| r.register(&name("Ada"), &key(1)));
    for taken in ["Ada", "ada", "ADA"] {
        assert_eq!(
            registry.register(&name(taken), &key(2)),
            Err(RegistryError::NameTaken {
                requested: name(taken),
                taken: name("Ada")
            })
        );
    }
    exec(&mut registry, |r| r.register(&name("Adam"), &key(2)));
    let listed: Vec<&str> = registry.players().map(|p| p.name.as_str()).collect();
    assert_eq!(listed, vec!["Ada", "Adam"]);
    // A stored event that slipped past the check changes nothing.
    registry.apply(&RegistryEvent::Registered {
        name: name("aDa"),
        key_sha256: key(3),
    });
    assert_eq!(registry.len(), 2);
    assert_eq!(registry.player(&name("aDa")), None);
}

#[test]
fn keys_find_their_player_and_are_never_shared() {
    let mut registry = Registry::default();
    exec(&mut registry, |r| {
        r.register(&name("Ada"), &key(1).to_uppercase())
    });
    assert_eq!(registry.by_key_hash(&[1; 32]), Some(&name("Ada")));
    assert_eq!(registry.by_key_hash_hex(&key(1)), Some(&name("Ada")));
    assert_eq!(registry.by_key_hash(&[2; 32]), None);
    assert_eq!(registry.by_key_hash_hex("not hex"), None);
    assert_eq!(
        registry.register(&name("Brun"), &key(1)),
        Err(RegistryError::KeyInUse)
    );
    assert_eq!(
        registry.register(&name("Brun"), "abc"),
        Err(RegistryError::InvalidKeyHash)
    );

    // A replaced key no longer finds the player; the new one does.
    exec(&mut registry, |r| r.replace_key(&name("Ada"), &key(7)));
    assert_eq!(registry.by_key_hash(&[1; 32]), None);
    assert_eq!(registry.by_key_hash(&[7; 32]), Some(&name("Ada")));
    exec(&mut registry, |r| r.register(&name("Brun"), &key(1)));
    assert_eq!(
        registry.replace_key(&name("Ada"), &key(1)),
        Err(RegistryError::KeyInUse)
    );
    assert_eq!(
        registry.replace_key(&name("Cy"), &key(9)),
        Err(RegistryError::UnknownPlayer(name("Cy")))
    );
}

#[test]
fn organisers_are_promoted_and_demoted() {
    let mut registry = Registry::default();
    exec(&mut registry, |r| r.register(&name("Ada"), &key(1)));
    assert!(!registry.player(&name("Ada")).unwrap().organiser);
    assert_eq!(
        registry.demote(&name("Ada")),
        Err(RegistryError::NotOrganiser(name("Ada")))
    );
    exec(&mut registry, |r| r.promote(&name("Ada")));
    assert_eq!(
        registry.player(&name("Ada")),
        Some(&PlayerRecord {
            name: name("Ada"),
            organiser: true
        })
    );
    assert_eq!(
        registry.promote(&name("Ada")),
        Err(RegistryError::AlreadyOrganiser(name("Ada")))
    );
    exec(&mut registry, |r| r.demote(&name("Ada")));
    assert!(!registry.player(&name("Ada")).unwrap().organiser);
    assert_eq!(
        registry.promote(&name("Brun")),
        Err(RegistryError::UnknownPlayer(name("Brun")))
    );
}

#[test]
fn a_registry_refolded_from_its_encoded_events_is_the_same() {
    let mut registry = Registry::default();
    let mut stored = Vec::new();
    type Step = Box<dyn Fn(&Registry) -> Result<RegistryEvent, RegistryError>>;
    let steps: Vec<Step> = vec![
        Box::new(|r| r.register(&name("Ada"), &key(1))),
        Box::new(|r| r.register(&name("Brun"), &key(2))),
        Box::new(|r| r.promote(&name("Brun"))),
        Box::new(|r| r.replace_key(&name("Ada"), &key(3))),
    ];
    for step in steps {
        let event = step(&registry).unwrap();
        registry.apply(&event);
        stored.push(event.encode());
    }
    let mut refolded = Registry::default();
    for bytes in &stored {
        refolded.apply(&RegistryEvent::decode(bytes).unwrap());
    }
    assert_eq!(
        refolded.players().collect::<Vec<_>>(),
        registry.players().collect::<Vec<_>>()
    );
    assert_eq!(refolded.by_key_hash(&[3; 32]), Some(&name("Ada")));
    assert_eq!(refolded.by_key_hash(&[1; 32]), None);
}
