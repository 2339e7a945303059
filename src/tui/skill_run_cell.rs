//! What a finished `skill_run` call shows instead of its raw JSON result: how it ended
//! (exit status, signal or time-out, and how long it took), the artifacts it saved and
//! the files it returned (paths), then the tail of its output — stderr's when it failed
//! and wrote there, else stdout's — like the bash cell.
//!
//! It reads the report the tool gives the model (docs: `tools/skill_run.rs`); a result
//! that is not such a report (an error before the run, a cut result) is left as it is.
//! It knows nothing about drawing: it returns the lines of the cell's body.

use serde_json::Value;

/// Lines of output shown at the end of the cell.
const TAIL_LINES: usize = 3;

/// The body lines for a `skill_run` result, or `None` when `summary` is not its report.
pub fn readable(summary: &str) -> Option<Vec<String>> {
    let first = summary.lines().next()?;
    let report: Value = serde_json::from_str(first).ok()?;
    let report = report.as_object()?;
    let duration = report.get("duration_ms")?.as_u64()?;
    let seconds = format!("{:.1} s", duration as f64 / 1000.0);
    let exit = report.get("exit_code").and_then(Value::as_i64);
    let signal = report.get("signal").and_then(Value::as_str);
    let timed_out = report.get("timed_out").and_then(Value::as_bool) == Some(true);
    let mut lines = vec![match (timed_out, signal, exit) {
        (true, _, _) => format!("timed out after {seconds}"),
        (false, Some(signal), _) => format!("killed by {signal} after {seconds}"),
        (false, None, Some(code)) => format!("exit {code} · {seconds}"),
        (false, None, None) => format!("ended after {seconds}"),
    }];
    let names = |key: &str, item: &dyn Fn(&Value) -> Option<String>| -> Option<String> {
        let items: Vec<String> = report
            .get(key)?
            .as_array()?
            .iter()
            .filter_map(item)
            .collect();
        (!items.is_empty()).then(|| items.join(", "))
    };
    if let Some(saved) = names("artifact_files", &|a| {
        Some(format!(
            "{} v{}",
            a.get("name")?.as_str()?,
            a.get("version")?.as_u64()?
        ))
    }) {
        lines.push(format!("artifacts: {saved}"));
    }
    if let Some(files) = names("files", &|f| Some(f.get("path")?.as_str()?.to_string())) {
        lines.push(format!("files: {files}"));
    }
    if let Some(error) = report.get("artifact_error").and_then(Value::as_str) {
        lines.push(format!("artifacts not saved: {error}"));
    }
    let text = |key: &str| report.get(key).and_then(Value::as_str).unwrap_or("");
    let failed = timed_out || signal.is_some() || exit != Some(0);
    let (stream, output) = if failed && !text("stderr").trim().is_empty() {
        ("stderr", text("stderr"))
    } else if !text("stdout").trim().is_empty() {
        ("stdout", text("stdout"))
    } else {
        ("stderr", text("stderr"))
    };
    let all: Vec<&str> = output.lines().filter(|l| !l.trim().is_empty()).collect();
    if !all.is_empty() {
        let skip = all.len().saturating_sub(TAIL_LINES);
        if skip > 0 {
            lines.push(format!("… {stream}: {skip} earlier lines"));
        } else if stream == "stderr" {
            lines.push("stderr:".to_string());
        }
        lines.extend(all[skip..].iter().map(|l| (*l).to_string()));
    }
    Some(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_becomes_status_artifacts_files_and_the_output_tail() {
        let report = serde_json::json!({
            "exit_code": 0, "timed_out": false, "duration_ms": 1234,
            "stdout": "step 1\nstep 2\nstep 3\nstep 4\nwrote out/report.md\n", "stderr": "",
            "files": [{"path": "out/report.md", "mime": "text/markdown", "size": 10}],
            "artifact_files": [{"name": "report.md", "version": 2}],
        });
        assert_eq!(
            readable(&report.to_string()).unwrap(),
            vec![
                "exit 0 · 1.2 s",
                "artifacts: report.md v2",
                "files: out/report.md",
                "… stdout: 2 earlier lines",
                "step 3",
                "step 4",
                "wrote out/report.md",
            ]
        );
    }

    #[test]
    fn a_failure_shows_stderr_and_other_results_are_left_alone() {
        let report = serde_json::json!({
            "exit_code": 2, "timed_out": false, "duration_ms": 40,
            "stdout": "partial\n", "stderr": "error: no input\n",
        });
        assert_eq!(
            readable(&report.to_string()).unwrap(),
            vec!["exit 2 · 0.0 s", "stderr:", "error: no input"]
        );
        let killed = serde_json::json!({
            "exit_code": null, "signal": "SIGKILL", "timed_out": true, "duration_ms": 30000,
            "stdout": "", "stderr": "",
        });
        assert_eq!(
            readable(&killed.to_string()).unwrap(),
            vec!["timed out after 30.0 s"]
        );
        assert_eq!(readable("skill_run: unknown skill 'x'"), None);
        assert_eq!(readable("[1, 2]"), None);
    }
}
