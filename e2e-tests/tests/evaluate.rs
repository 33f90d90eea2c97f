//! `make run` and the evaluate tool under it: input that is not an AdmissionRequest or
//! AdmissionReview is an error that says so (exit 1), `SETTINGS` alone keeps the bundled request,
//! and standard output is the AdmissionReview alone, make's own lines included.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use policy_host::workspace_dir;
use serde_json::{Value, json};

const EVALUATE: &str = env!("CARGO_BIN_EXE_evaluate");

/// A file under the test's own folder in target/.
fn file(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("evaluate");
    std::fs::create_dir_all(&dir).expect("a folder in target/");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("written");
    path
}

fn evaluate(args: &[&str]) -> Output {
    Command::new(EVALUATE)
        .args(args)
        .current_dir(workspace_dir())
        .output()
        .expect("evaluate runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Exit 1, nothing on stdout, and `want` in the error.
fn refused(output: &Output, want: &str) {
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(text(&output.stdout), "", "{stderr}");
    assert!(stderr.contains(want), "want {want:?} in: {stderr}");
}

/// The AdmissionReview on stdout, exit 0.
fn review(output: &Output) -> Value {
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", text(&output.stdout)))
}

#[test]
fn input_that_is_not_a_request_is_an_error() {
    let not_json = file("notjson.txt", "this is not JSON\n");
    let cases = [
        (
            not_json,
            "not an AdmissionRequest or AdmissionReview: the file holds a string",
        ),
        (
            file("empty.json", "{}"),
            "not an AdmissionRequest or AdmissionReview: missing field `uid`",
        ),
        (
            file("list.yaml", "- uid: a\n"),
            "not an AdmissionRequest or AdmissionReview: the file holds a list",
        ),
        (
            file("review.json", r#"{"kind": "AdmissionReview"}"#),
            "an AdmissionReview without request",
        ),
        (
            file("no-kind.json", r#"{"uid": "u", "operation": "CREATE"}"#),
            "missing field `kind`",
        ),
        (file("broken.json", "{\"uid\": "), "broken.json: "),
        (PathBuf::from("no-such-file.json"), "no-such-file.json: "),
    ];
    for (path, want) in cases {
        let path = path.to_str().expect("a UTF-8 path");
        refused(&evaluate(&[path]), want);
    }
}

#[test]
fn a_bad_command_line_exits_1() {
    refused(&evaluate(&["--bogus"]), "unknown flag --bogus");
    refused(&evaluate(&["a.json", "b.json"]), "one REQUEST only");
    refused(&evaluate(&["--settings"]), "--settings needs a file");
}

#[test]
fn settings_alone_keep_the_bundled_request() {
    let settings = file("settings.yaml", "defaultStrategy: Shutdown\n");
    let answer = review(&evaluate(&["--settings", settings.to_str().unwrap()]));
    // The bundled sample (examples/legacy-vm-create.json), labelled with the settings' default.
    assert_eq!(
        answer["response"]["uid"],
        json!("1299d386-525b-4032-98ae-1949f69f9cfc")
    );
    assert_eq!(answer["response"]["allowed"], json!(true));
    let output = evaluate(&["--settings", settings.to_str().unwrap()]);
    assert!(
        text(&output.stderr).contains(r#""harvesterhci.io/maintain-mode-strategy": "Shutdown""#),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn a_policy_manifest_gives_its_spec_settings() {
    // examples/strict-cluster.yaml: evictionStrategy.default LiveMigrateIfPossible.
    let output = evaluate(&[
        "examples/legacy-vm-create.json",
        "--settings",
        "examples/strict-cluster.yaml",
    ]);
    review(&output);
    let patch = text(&output.stderr);
    assert!(
        patch.contains(r#""path": "/spec/template/spec/evictionStrategy""#),
        "{patch}"
    );
    refused(
        &evaluate(&[
            "--settings",
            file("bad.yaml", "mutate: maybe\n").to_str().unwrap(),
        ]),
        "Provided settings are not valid: mutate: invalid type",
    );
}

/// The newest modification time of `path`, a file or a folder's files.
fn newest(path: &Path) -> std::time::SystemTime {
    let meta = std::fs::metadata(path).expect("a source path");
    if !meta.is_dir() {
        return meta.modified().expect("a modification time");
    }
    std::fs::read_dir(path)
        .expect("a readable folder")
        .map(|entry| newest(&entry.expect("an entry").path()))
        .max()
        .unwrap_or(std::time::UNIX_EPOCH)
}

/// `make run` as a user types it (no outer make's flags): stdout parses as one JSON document (make
/// builds policy.wasm quietly, on stderr); `SETTINGS` alone is the settings, not the request.
#[test]
fn make_run_prints_only_the_review() {
    // The Makefile's SOURCES: a stale policy.wasm would be rebuilt under the other tests' feet.
    let root = workspace_dir();
    let sources = ["src", "Cargo.toml", "Cargo.lock"].map(|p| newest(&root.join(p)));
    let module = std::fs::metadata(root.join("policy.wasm")).and_then(|m| m.modified());
    if !module.is_ok_and(|built| sources.iter().all(|s| *s <= built)) {
        eprintln!("skipped: policy.wasm is older than its sources (make test builds it first)");
        return;
    }
    let settings = file("make-settings.yaml", "defaultStrategy: Shutdown\n");
    let make = |args: &[String]| {
        Command::new("make")
            .arg("run")
            .args(args)
            .arg(format!("EVALUATE={EVALUATE}"))
            .env_remove("MAKEFLAGS")
            .env_remove("MFLAGS")
            .env_remove("MAKELEVEL")
            .current_dir(workspace_dir())
            .output()
            .expect("make runs")
    };
    let answer = review(&make(&[format!("SETTINGS={}", settings.display())]));
    assert_eq!(answer["kind"], json!("AdmissionReview"));
    assert_eq!(answer["response"]["allowed"], json!(true));
    let output = make(&["REQUEST=examples/invalid-vm-create.json".to_owned()]);
    assert_eq!(review(&output)["response"]["status"]["code"], json!(422));
    let not_json = file("make-notjson.txt", "not JSON\n");
    let output = make(&[format!("REQUEST={}", not_json.display())]);
    assert_eq!(
        output.status.code(),
        Some(2),
        "make reports the tool's 1 as 2"
    );
    assert_eq!(text(&output.stdout), "");
    assert!(text(&output.stderr).contains("not an AdmissionRequest or AdmissionReview"));
}
