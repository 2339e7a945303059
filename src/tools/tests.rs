//! The tools' shared types under test: typed arguments, blocking work, access
//! declarations and the built-in schemas.

use super::*;

mod typed_tests {
    use crate::protocol::Location;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde::Deserialize;
    use serde_json::json;

    use super::*;
    use crate::test_support::assert_contains;

    /// Times [`Counted`] was deserialized. The other test here never gets that far: its
    /// arguments fail the schema check first.
    static PARSES: AtomicUsize = AtomicUsize::new(0);

    /// Arguments that count their own deserializations.
    struct Counted {
        path: String,
    }

    impl<'de> Deserialize<'de> for Counted {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            #[derive(Deserialize)]
            struct Raw {
                path: String,
            }
            PARSES.fetch_add(1, Ordering::SeqCst);
            Raw::deserialize(d).map(|raw| Counted { path: raw.path })
        }
    }

    struct Touch;

    impl TypedTool for Touch {
        type Args = Counted;
        const NAME: &'static str = "touch";
        const DESCRIPTION: &'static str = "test tool";
        fn parameters(&self) -> serde_json::Value {
            json!({
                "type": "object",
                "properties": {"path": {"type": "string", "description": "A path."}},
                "required": ["path"]
            })
        }
        fn access(&self, args: &Counted, ctx: &ToolContext) -> Access {
            Access::NeedsApproval(ApprovalRequestKind::Edit {
                path: ctx.workdir.join(&args.path),
                via: None,
                diff: None,
                location: Location::Inside,
            })
        }
        fn summary(&self, args: &Counted) -> String {
            format!("touch {}", args.path)
        }
        fn execute<'a>(&'a self, args: Counted, _: &'a ToolContext) -> ToolFuture<'a> {
            Box::pin(async move { Ok(ToolOutput::ok(format!("touched {}", args.path))) })
        }
    }

    #[tokio::test]
    async fn arguments_are_parsed_once_for_access_summary_and_run() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path());
        let tool: Arc<dyn Tool> = Arc::new(Touch);
        let before = PARSES.load(Ordering::SeqCst);
        let call = tool.prepare(json!({"path": "a.txt"})).ok().unwrap();
        assert_eq!(
            call.access(&ctx),
            Access::NeedsApproval(ApprovalRequestKind::Edit {
                path: ctx.workdir.join("a.txt"),
                via: None,
                diff: None,
                location: Location::Inside,
            })
        );
        assert_eq!(call.summary(), "touch a.txt");
        let out = call.run(&ctx).await.unwrap();
        assert_eq!(out, ToolOutput::ok("touched a.txt"));
        assert_eq!(PARSES.load(Ordering::SeqCst) - before, 1);
    }

    #[test]
    fn a_value_serde_refuses_is_named_by_its_field() {
        #[derive(Debug, Deserialize)]
        #[serde(rename_all = "lowercase")]
        enum Mode {
            Add,
        }
        #[derive(Debug, Deserialize)]
        struct Args {
            #[allow(dead_code)]
            mode: Mode,
            #[allow(dead_code)]
            count: Option<u32>,
        }
        let schema = json!({
            "type": "object",
            "properties": {"mode": {"type": "string"}, "count": {"type": "integer"}},
            "required": ["mode"]
        });
        let refused =
            |args: serde_json::Value| parse_args::<Args>("t", &args, &schema).unwrap_err().content;
        assert_contains(
            &refused(json!({"mode": "add", "count": -1})),
            "Invalid arguments for t: field `count`: invalid value: integer `-1`, expected u32.",
        );
        // A required field: without it, the only complaint is that it is missing.
        assert_contains(
            &refused(json!({"mode": "drop", "count": 2})),
            "Invalid arguments for t: field `mode`: unknown variant `drop`, expected `add`.",
        );
        // Two bad values: no single field is to blame, serde's message stands alone.
        assert_contains(
            &refused(json!({"mode": "drop", "count": -1})),
            "Invalid arguments for t: unknown variant `drop`",
        );
        assert!(parse_args::<Args>("t", &json!({"mode": "add"}), &schema).is_ok());
    }

    #[tokio::test]
    async fn refused_arguments_are_the_same_error_from_prepare_and_run() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = test_context(dir.path());
        let expected = [
            (
                json!([1]),
                "Invalid arguments for touch: arguments must be a JSON object, got an array. \
                 Expected {\"path\": string}.",
            ),
            (
                json!(null),
                "Invalid arguments for touch: missing field `path`. Expected {\"path\": string}.",
            ),
            (
                json!({"path": 7}),
                "Invalid arguments for touch: field `path` must be a string, got an integer. \
                 Expected {\"path\": string}.",
            ),
        ];
        for (args, message) in expected {
            let refused = Touch.prepare(args.clone()).err().unwrap();
            assert_eq!(refused, ToolOutput::error(message), "{args}");
            assert_eq!(
                Touch.run(args, &ctx).await.unwrap(),
                ToolOutput::error(message)
            );
        }
    }
}

mod blocking_tests {
    use super::*;

    /// Blocking work that never looks at the token (a read stuck in the kernel) still
    /// lets the call end at once as interrupted.
    #[tokio::test]
    async fn blocking_work_stops_being_waited_for_at_a_cancel() {
        let cancel = CancellationToken::new();
        let (release, stuck) = std::sync::mpsc::channel::<()>();
        let token = cancel.clone();
        let call = tokio::spawn(async move {
            run_blocking_until(&token, move || {
                let _ = stuck.recv();
                "finished"
            })
            .await
        });
        cancel.cancel();
        let result = tokio::time::timeout(std::time::Duration::from_secs(10), call)
            .await
            .expect("the call ends without the work finishing")
            .unwrap();
        assert!(matches!(result, Err(ToolFatal::Interrupted)), "{result:?}");
        drop(release);
        // Finished work is returned, not reported as interrupted.
        let done = run_blocking_until(&CancellationToken::new(), || 7).await;
        assert_eq!(done.unwrap(), 7);
    }
}

mod access_tests {
    use std::path::Path;

    use serde_json::json;

    use super::glob::Glob;
    use super::grep::Grep;
    use super::list::List;
    use super::read_file::ReadFile;
    use super::*;
    use crate::protocol::ApprovalRequestKind;

    #[test]
    fn reading_tools_ask_only_outside_the_project() {
        let (_d, ctx) = test_tree(&[]);
        let ok = |path: &str| Access::ReadInside(ctx.workdir.join(path));
        let ask = |path: &str| {
            Access::NeedsApproval(ApprovalRequestKind::ReadOutside {
                path: Path::new(path).to_path_buf(),
                via: None,
            })
        };
        let parent = ctx.workdir.parent().unwrap().to_str().unwrap();
        let cases: [(&dyn Tool, serde_json::Value, Access); 8] = [
            (&Glob, json!({"pattern": "*"}), ok("")),
            (&Glob, json!({"pattern": "*", "path": "/usr"}), ask("/usr")),
            (&Grep, json!({"pattern": "x"}), ok("")),
            (&Grep, json!({"pattern": "x", "path": "/etc"}), ask("/etc")),
            (&List, json!({}), ok("")),
            (&List, json!({"path": ".."}), ask(parent)),
            (&ReadFile, json!({"path": "src/x.rs"}), ok("src/x.rs")),
            (&ReadFile, json!({"path": "/etc/hosts"}), ask("/etc/hosts")),
        ];
        for (tool, args, expected) in cases {
            let access = prepared(tool, args.clone()).access(&ctx);
            assert_eq!(access, expected, "{} {args}", tool.name());
        }
    }
}

mod schema_tests {
    use super::skill::docs::{SkillListDocs, SkillSelectDocs};
    use super::skill::unload_skill::UnloadSkill;
    use super::skill::use_skill::UseSkill;
    use super::*;

    /// Every built-in tool's schema, by its file's name (the tool's name, or the tool's
    /// name and the variant).
    fn built_in() -> Vec<(&'static str, &'static str)> {
        vec![
            (bash::Bash::NAME, bash::Bash::PARAMETERS),
            (edit_file::EditFile::NAME, edit_file::EditFile::PARAMETERS),
            (glob::Glob::NAME, glob::Glob::PARAMETERS),
            (grep::Grep::NAME, grep::Grep::PARAMETERS),
            (list::List::NAME, list::List::PARAMETERS),
            (read_file::ReadFile::NAME, read_file::ReadFile::PARAMETERS),
            (
                view_image::ViewImage::NAME,
                view_image::ViewImage::PARAMETERS,
            ),
            (
                write_file::WriteFile::NAME,
                write_file::WriteFile::PARAMETERS,
            ),
            (UseSkill::NAME, UseSkill::PARAMETERS),
            (
                "use_skill_servers",
                super::skill::use_skill::SERVERS_PARAMETERS,
            ),
            (UnloadSkill::NAME, UnloadSkill::PARAMETERS),
            (
                "unload_skill_servers",
                super::skill::unload_skill::SERVERS_PARAMETERS,
            ),
            (SkillListDocs::NAME, SkillListDocs::PARAMETERS),
            (SkillSelectDocs::NAME, SkillSelectDocs::PARAMETERS),
            (skill_run::SkillRun::NAME, skill_run::SkillRun::PARAMETERS),
            (exit_plan::ExitPlan::NAME, exit_plan::ExitPlan::PARAMETERS),
            (
                super::web_fetch::WebFetch::NAME,
                super::web_fetch::WebFetch::PARAMETERS,
            ),
            (
                super::web_search::WebSearch::NAME,
                super::web_search::WebSearch::PARAMETERS,
            ),
            (
                update_plan::UpdatePlan::NAME,
                update_plan::UpdatePlan::PARAMETERS,
            ),
            (
                agent_tool::AgentTool::NAME,
                agent_tool::AgentTool::PARAMETERS,
            ),
        ]
    }

    #[test]
    fn every_built_in_schema_is_an_object_schema() {
        for (name, text) in built_in() {
            let schema: serde_json::Value = serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("tools/schemas/{name}.json: {e}"));
            assert_eq!(schema["type"], "object", "{name}");
            let properties = schema["properties"]
                .as_object()
                .unwrap_or_else(|| panic!("{name}: no properties"));
            for (property, spec) in properties {
                assert!(spec["type"].is_string(), "{name}.{property}: no type");
                assert!(
                    spec["description"].as_str().is_some_and(|d| !d.is_empty()),
                    "{name}.{property}: no description"
                );
            }
            for required in schema["required"].as_array().into_iter().flatten() {
                let required = required.as_str().unwrap_or_default();
                assert!(
                    properties.contains_key(required),
                    "{name}: `{required}` is required but not a property"
                );
            }
            assert_eq!(schema_from_text(text), schema, "{name}");
        }
    }

    #[test]
    fn the_schema_folder_holds_exactly_the_built_in_tools() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/tools/schemas");
        let mut files: Vec<String> = std::fs::read_dir(&folder)
            .unwrap_or_else(|e| panic!("{}: {e}", folder.display()))
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let mut expected: Vec<String> = built_in()
            .iter()
            .map(|(name, _)| format!("{name}.json"))
            .collect();
        expected.sort();
        assert_eq!(files, expected);
    }
}
