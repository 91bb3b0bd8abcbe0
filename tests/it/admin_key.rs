//! The admin key as an operator gives it to `carcassonne serve`: from a
//! file (`--admin-key-file`, its first line) or from the environment
//! (`CARCASSONNE_ADMIN_KEY`). The real binary is started each time: the key
//! is loaded (it registers players and makes organisers), a wrong key is
//! refused, a short one stops the server at its start, and neither the
//! server's standard output nor its log ever shows a key.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use carcassonne::proto::{self, player_service_client::PlayerServiceClient};
use tonic::Code;

use crate::support::{reason, with_token};

/// Every variable that gives `serve` an admin key or says who registers.
const ADMIN_VARIABLES: [&str; 3] = [
    "CARCASSONNE_ADMIN_KEY",
    "CARCASSONNE_ADMIN_KEY_FILE",
    "CARCASSONNE_REGISTRATION",
];

/// As much as the server logs: every line that could show a key.
const LOUD: &str = "debug,carcassonne=trace,carcassonne_store=trace";

/// `carcassonne serve` started in `dir`, its standard output and error in
/// files there.
struct Serving {
    child: Child,
    addr: String,
    stdout: PathBuf,
    stderr: PathBuf,
}

/// What `serve` is started with: arguments and environment variables.
type Start<'a> = (&'a [&'a str], Vec<(&'a str, &'a str)>);

/// How a server that did not start ended: its exit code, standard output
/// and standard error.
struct Refused {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Starts `carcassonne serve --registration admin` with its store in
/// `dir`, `args` and `env` added (and no admin key from the test's own
/// environment), at log level [`LOUD`]; waits until it listens, or until
/// it exits. Async, so that the test's clients go on answering the
/// server meanwhile.
async fn serve(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Result<Serving, Refused> {
    let stdout = dir.join("stdout");
    let stderr = dir.join("stderr");
    let mut command = Command::new(env!("CARGO_BIN_EXE_carcassonne"));
    command
        .args([
            "serve",
            "--addr",
            "127.0.0.1:0",
            "--registration",
            "admin",
            "--data",
        ])
        .arg(dir.join("data"))
        .args(args)
        .env("RUST_LOG", LOUD)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap());
    for variable in ADMIN_VARIABLES {
        command.env_remove(variable);
    }
    command.envs(env.iter().copied());
    let mut child = command.spawn().unwrap();
    let started = Instant::now();
    loop {
        let printed = std::fs::read_to_string(&stdout).unwrap();
        if let Some(line) = printed.lines().find(|l| l.starts_with("listening on ")) {
            // Whole only once its newline is written.
            if printed.contains(&format!("{line}\n")) {
                let addr = format!("http://{}", &line["listening on ".len()..]);
                return Ok(Serving {
                    child,
                    addr,
                    stdout,
                    stderr,
                });
            }
        }
        if let Some(status) = child.try_wait().unwrap() {
            return Err(Refused {
                code: status.code(),
                stdout: std::fs::read_to_string(&stdout).unwrap(),
                stderr: std::fs::read_to_string(&stderr).unwrap(),
            });
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "serve neither listens nor exits"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

impl Serving {
    /// SIGTERM, then the exit code, standard output and standard error.
    /// Waits without blocking the runtime: the server stops once its
    /// connections close, and the test's clients close theirs on it.
    async fn terminate(mut self) -> (Option<i32>, String, String) {
        let killed = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "serve does not stop on SIGTERM"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        (
            status.code(),
            std::fs::read_to_string(&self.stdout).unwrap(),
            std::fs::read_to_string(&self.stderr).unwrap(),
        )
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Registers Ada with `key` and makes her an organiser with it, after a
/// wrong key is refused for both.
async fn admin_acts(addr: &str, key: &str, wrong: &str) {
    let mut players = PlayerServiceClient::connect(addr.to_owned()).await.unwrap();
    let register = proto::RegisterPlayerRequest {
        name: "Ada".to_owned(),
    };
    let refused = players
        .register_player(with_token(register.clone(), wrong))
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::PermissionDenied, "REGISTRATION_CLOSED")
    );
    let registered = players
        .register_player(with_token(register, key))
        .await
        .unwrap()
        .into_inner();
    assert!(!registered.player.unwrap().organiser);
    let promote = proto::SetOrganiserRequest {
        name: "players/Ada".to_owned(),
        organiser: true,
    };
    let refused = players
        .set_organiser(with_token(promote.clone(), wrong))
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code(), reason(&refused).as_str()),
        (Code::PermissionDenied, "NOT_ADMIN")
    );
    // Ada's own key is no admin key.
    let refused = players
        .set_organiser(with_token(promote.clone(), &registered.api_key))
        .await
        .unwrap_err();
    assert_eq!(reason(&refused), "NOT_ADMIN");
    let promoted = players
        .set_organiser(with_token(promote, key))
        .await
        .unwrap()
        .into_inner();
    assert!(promoted.player.unwrap().organiser);
    let ada = players
        .get_player(proto::GetPlayerRequest {
            name: "players/Ada".to_owned(),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(ada.player.unwrap().organiser, "Ada is an organiser");
}

/// `key` is no admin key: it makes no organiser.
async fn admin_acts_refused(addr: &str, key: &str) {
    let mut players = PlayerServiceClient::connect(addr.to_owned()).await.unwrap();
    let promote = proto::SetOrganiserRequest {
        name: "players/Ada".to_owned(),
        organiser: false,
    };
    let refused = players.set_organiser(with_token(promote, key)).await.unwrap_err();
    assert_eq!(reason(&refused), "NOT_ADMIN");
}

/// The server stopped cleanly, and neither its standard output nor its
/// log shows any of `keys`; the log is the server's (it tells of the
/// organiser made).
async fn stopped_without_showing(served: Serving, keys: &[&str]) {
    let (code, stdout, stderr) = served.terminate().await;
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.starts_with("listening on "), "{stdout}");
    assert!(
        stderr.contains("organiser set") && stderr.contains("Ada"),
        "the log was not captured:\n{stderr}"
    );
    for key in keys {
        assert!(!stdout.contains(key), "a key on standard output:\n{stdout}");
        assert!(!stderr.contains(key), "a key in the log");
    }
}

#[tokio::test]
async fn the_admin_key_from_a_file_makes_organisers_and_is_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    let key = "admin-key-from-a-file-0123456789";
    // Its first line, trimmed; the key in the environment is not used when
    // a file is given.
    let file = dir.path().join("admin.key");
    std::fs::write(&file, format!("  {key} \nnot-the-key-on-line-two-00000\n")).unwrap();
    let ignored = "admin-key-in-the-environment-000";
    let served = serve(
        dir.path(),
        &["--admin-key-file", file.to_str().unwrap()],
        &[("CARCASSONNE_ADMIN_KEY", ignored)],
    )
    .await
    .unwrap_or_else(|r| panic!("exit {:?}: {}", r.code, r.stderr));
    admin_acts(&served.addr, key, ignored).await;
    admin_acts_refused(&served.addr, "not-the-key-on-line-two-00000").await;
    stopped_without_showing(served, &[key, ignored, "not-the-key-on-line-two"]).await;

    // The same file named by CARCASSONNE_ADMIN_KEY_FILE.
    let dir = tempfile::tempdir().unwrap();
    let served = serve(
        dir.path(),
        &[],
        &[("CARCASSONNE_ADMIN_KEY_FILE", file.to_str().unwrap())],
    )
    .await
    .unwrap_or_else(|r| panic!("exit {:?}: {}", r.code, r.stderr));
    admin_acts(&served.addr, key, "admin-key-that-is-wrong-000000").await;
    stopped_without_showing(served, &[key, "not-the-key-on-line-two"]).await;
}

#[tokio::test]
async fn the_admin_key_from_the_environment_makes_organisers_and_is_never_printed() {
    let dir = tempfile::tempdir().unwrap();
    // 16 characters: the shortest key accepted; spaces around it trimmed.
    let key = "env-admin-key-16";
    assert_eq!(key.len(), 16);
    let served = serve(
        dir.path(),
        &[],
        &[("CARCASSONNE_ADMIN_KEY", &format!(" {key}\n"))],
    )
    .await
    .unwrap_or_else(|r| panic!("exit {:?}: {}", r.code, r.stderr));
    // A key that is the admin key but for its last character.
    admin_acts(&served.addr, key, "env-admin-key-17").await;
    stopped_without_showing(served, &[key]).await;
}

#[tokio::test]
async fn a_short_or_unreadable_admin_key_stops_the_server_at_its_start_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    // 15 characters, from the environment and from a file.
    let short = "short-admin-key";
    assert_eq!(short.len(), 15);
    let file = dir.path().join("admin.key");
    std::fs::write(&file, format!("{short}\n")).unwrap();
    let blank = dir.path().join("blank.key");
    std::fs::write(&blank, "\n").unwrap();
    let from_file = ["--admin-key-file", file.to_str().unwrap()];
    let from_blank = ["--admin-key-file", blank.to_str().unwrap()];
    let long_but_spaces = format!("   {short}   ");
    let cases: [Start<'_>; 4] = [
        (&[], vec![("CARCASSONNE_ADMIN_KEY", short)]),
        // Spaces around the key do not count.
        (&[], vec![("CARCASSONNE_ADMIN_KEY", &long_but_spaces)]),
        (&from_file, vec![]),
        (&from_blank, vec![]),
    ];
    for (args, env) in cases {
        let refused = match serve(dir.path(), args, &env).await {
            Ok(served) => {
                let (_, _, log) = served.terminate().await;
                panic!("{args:?} {env:?}: the server started\n{log}");
            }
            Err(refused) => refused,
        };
        assert_eq!(refused.code, Some(2), "{args:?} {env:?}: {}", refused.stderr);
        assert_eq!(refused.stdout, "", "{args:?} {env:?}: nothing listens");
        assert!(
            refused
                .stderr
                .ends_with("error: the admin key must have at least 16 characters\n"),
            "{args:?} {env:?}: {}",
            refused.stderr
        );
        assert!(!refused.stderr.contains(short), "the key in the message");
    }

    // A file that cannot be read is named.
    let missing = dir.path().join("missing.key");
    let refused = match serve(dir.path(), &["--admin-key-file", missing.to_str().unwrap()], &[]).await {
        Ok(_) => panic!("the server started without its admin key file"),
        Err(refused) => refused,
    };
    assert_eq!(refused.code, Some(2), "{}", refused.stderr);
    assert!(
        refused.stderr.contains(&format!(
            "error: reading the admin key file {}: ",
            missing.display()
        )),
        "{}",
        refused.stderr
    );
}
