//! The shell reader against plain lines, quoting, the reported bypasses and every
//! construct that hides what runs; proptests that it never panics.

use super::*;

fn words(line: &str) -> Vec<Vec<String>> {
    parse(line).commands.into_iter().map(|c| c.words).collect()
}

fn w(list: &[&[&str]]) -> Vec<Vec<String>> {
    list.iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect()
}

#[test]
fn splits_lists_and_pipelines_into_simple_commands() {
    assert_eq!(
        words("cargo fmt && cargo test -q; git status | head -n 5 || echo no & ls"),
        w(&[
            &["cargo", "fmt"],
            &["cargo", "test", "-q"],
            &["git", "status"],
            &["head", "-n", "5"],
            &["echo", "no"],
            &["ls"],
        ])
    );
    assert_eq!(words("a\nb |& c"), w(&[&["a"], &["b"], &["c"]]));
    assert!(parse("cargo fmt && cargo test").is_plain());
}

#[test]
fn removes_quotes_and_keeps_quoted_operators_as_text() {
    let p = parse(r#"echo 'a; b' "c && d" e\;f "x\"y" 'it'"'"'s'"#);
    assert!(p.is_plain(), "{:?}", p.hazards);
    assert_eq!(
        p.commands[0].words,
        vec!["echo", "a; b", "c && d", "e;f", "x\"y", "it's"]
    );
}

#[test]
fn the_reported_bypasses_are_hazards_or_separate_commands() {
    // "always allow echo" must not cover the second command.
    assert_eq!(
        words("echo innocent; touch /tmp/x"),
        w(&[&["echo", "innocent"], &["touch", "/tmp/x"]])
    );
    let p = parse("echo $(touch /tmp/y)");
    assert!(p.hazards.contains(&Hazard::CommandSubstitution));
    // The command inside is still seen (for deny rules).
    assert!(p.commands.iter().any(|c| c.words == ["touch", "/tmp/y"]));
    let p = parse("echo `rm -rf x`");
    assert!(p.hazards.contains(&Hazard::CommandSubstitution));
    assert!(p.commands.iter().any(|c| c.words == ["rm", "-rf", "x"]));
    let p = parse(r#"echo "$(id)""#);
    assert!(p.hazards.contains(&Hazard::CommandSubstitution));
    assert!(
        parse("echo ${x:-$(id)}")
            .hazards
            .contains(&Hazard::CommandSubstitution)
    );
}

#[test]
fn constructs_that_hide_what_runs_are_hazards() {
    for line in [
        "cat <(curl x)",
        "tee >(sh)",
        "cat <<EOF\nhi\nEOF",
        "if true; then rm x; fi",
        "for f in *; do rm $f; done",
        "f() { rm x; }",
        "$CMD arg",
        "./*.sh",
        "eval 'rm -rf /'",
        "sudo ls",
        "xargs rm",
        "bash -c 'rm x'",
        "sh -ec 'rm x'",
        "find . -name x -exec rm {} +",
        "find . -delete",
        "git -c core.pager=sh log",
        "rg --pre ./evil x",
        "LD_PRELOAD=/tmp/x.so ls",
        "PATH=/tmp/evil:$PATH ls",
        "echo $'\\x41'",
        "echo 'unterminated",
        "echo $((1+2))",
        "[[ -f x ]] && ls",
        "env FOO=1 ls",
        "env -S'touch /tmp/x'",
        "cat < /dev/tcp/example.com/80",
        "RIPGREP_CONFIG_PATH=./x rg foo",
        "env --split-string='touch x'",
        "command ls",
        "source ./x.sh",
        ". ./x.sh",
        "exec 3>/tmp/x",
        "ls {fd}>x",
        "(( x++ ))",
    ] {
        assert!(!parse(line).is_plain(), "{line} should be a hazard");
    }
}

#[test]
fn redirections_are_kept_with_their_targets() {
    let p = parse("echo hi > out.txt 2>&1; cat < in.txt >> log 2> /dev/null; x &> all");
    assert!(p.is_plain(), "{:?}", p.hazards);
    let r: Vec<(Direction, &str)> = p
        .commands
        .iter()
        .flat_map(|c| c.redirects.iter().map(|r| (r.direction, r.target.as_str())))
        .collect();
    assert_eq!(
        r,
        vec![
            (Direction::Write, "out.txt"),
            (Direction::Read, "in.txt"),
            (Direction::Write, "log"),
            (Direction::Write, "/dev/null"),
            (Direction::Write, "all"),
        ]
    );
    assert_eq!(p.commands[1].words, vec!["cat"]);
    // `>$file` is not a literal target.
    assert!(!parse("echo x > $F").is_plain());
}

#[test]
fn assignments_before_the_command_are_kept_apart() {
    let p = parse("RUST_LOG=debug FOO='a b' cargo test");
    // FOO is not on the short list of variables a rule may see set.
    assert_eq!(p.hazards, vec![Hazard::Assignment { name: "FOO".into() }]);
    assert!(parse("RUST_LOG=debug LC_ALL=C cargo test").is_plain());
    assert_eq!(p.commands[0].words, vec!["cargo", "test"]);
    assert_eq!(
        p.commands[0].assignments,
        vec![
            ("RUST_LOG".to_string(), "debug".to_string()),
            ("FOO".to_string(), "a b".to_string())
        ]
    );
    // After the name, `a=b` is an argument.
    assert_eq!(words("make CC=gcc"), w(&[&["make", "CC=gcc"]]));
}

#[test]
fn subshells_count_their_commands() {
    let p = parse("(cd sub && rm -rf build)");
    assert!(p.is_plain(), "{:?}", p.hazards);
    assert_eq!(p.commands[1].words, vec!["rm", "-rf", "build"]);
    assert!(!parse("(ls").is_plain());
    assert!(!parse("ls)").is_plain());
}

#[test]
fn comments_and_continuations() {
    assert_eq!(words("ls # ; rm -rf /"), w(&[&["ls"]]));
    assert_eq!(words("cargo \\\n test"), w(&[&["cargo", "test"]]));
    assert_eq!(words("echo a#b"), w(&[&["echo", "a#b"]]));
}

#[test]
fn a_quoted_keyword_or_glob_in_an_argument_is_fine() {
    assert!(parse("env").is_plain());
    assert!(parse("env -0").is_plain());
    assert!(parse("command -v cargo").is_plain());
    assert!(parse("rg 'if' 'src/*.rs'").is_plain());
    assert!(parse("echo '$(not run)'").is_plain());
    assert!(parse("ls ~/x").is_plain());
}

proptest::proptest! {
    #[test]
    fn never_panics(line in "[ -~\\n\\t]{0,80}") {
        let _ = parse(&line);
    }

    // Words without `/`: `q/su` names a program called su, which is a wrapper.
    #[test]
    fn words_of_plain_lines_never_hold_operators(
        parts in proptest::collection::vec("q[a-z0-9_.-]{0,7}", 1..6)
    ) {
        let line = parts.join(" ; ");
        let p = parse(&line);
        proptest::prop_assert!(p.is_plain());
        proptest::prop_assert_eq!(p.commands.len(), parts.len());
    }
}
