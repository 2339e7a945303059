#!/usr/bin/env bash
# The step logic of the harness9 GitHub Action (action.yml; docs/CI.md), kept here so
# it can be run, and tested, outside GitHub: tests/all/ci_action.rs runs it against the
# scripted server with a fake GITHUB_OUTPUT file and a fake `gh` on PATH.
#
# Inputs come as environment variables (action.yml maps its inputs onto them):
#   H9_PROMPT            the prompt (or H9_SKILL, with H9_SKILL_ARGS: runs /SKILL ARGS)
#   H9_ALLOW, H9_DENY    permission rules, one a line (--allow / --deny each)
#   H9_APPEND_SYSTEM_PROMPT, H9_TIMEOUT, H9_MAX_COST, H9_OUTPUT_SCHEMA, H9_MODEL,
#   H9_BASE_URL, H9_APPROVAL_MODE, H9_MAX_TURNS
#                        the flags of the same names (empty: not given)
#   H9_COMMENT           "true": comment the result on pull request H9_PR_NUMBER with
#                        `gh pr comment`, authenticated by H9_GITHUB_TOKEN
#   H9_BINARY            the harness9 to run (default: harness9 on PATH)
#   H9_OUT_DIR           where the run's files go (default: $RUNNER_TEMP/harness9)
# Outputs (appended to $GITHUB_OUTPUT): exit_code, result, is_error, error_kind,
# cost_usd, session_id, session_export (a Markdown file of the session), events (the
# stream-json file). The step exits with harness9's own exit code (docs/HEADLESS.md).
set -uo pipefail

binary=${H9_BINARY:-harness9}
out_dir=${H9_OUT_DIR:-${RUNNER_TEMP:-/tmp}/harness9}
mkdir -p "$out_dir"
events="$out_dir/events.jsonl"
export_file="$out_dir/session.md"
: "${GITHUB_OUTPUT:?GITHUB_OUTPUT must name the output file of the step}"

if [[ -n "${H9_SKILL:-}" ]]; then
    prompt="/${H9_SKILL#/}${H9_SKILL_ARGS:+ $H9_SKILL_ARGS}"
elif [[ -n "${H9_PROMPT:-}" ]]; then
    prompt=$H9_PROMPT
else
    echo "harness9 action: give a prompt or a skill" >&2
    echo "exit_code=2" >>"$GITHUB_OUTPUT"
    exit 2
fi

args=(-p "$prompt" --output-format stream-json)
while IFS= read -r rule; do
    [[ -n "$rule" ]] && args+=(--allow "$rule")
done <<<"${H9_ALLOW:-}"
while IFS= read -r rule; do
    [[ -n "$rule" ]] && args+=(--deny "$rule")
done <<<"${H9_DENY:-}"
flag() { # flag NAME VALUE: --NAME VALUE when VALUE is not empty
    [[ -n "$2" ]] && args+=("--$1" "$2")
    return 0
}
flag append-system-prompt "${H9_APPEND_SYSTEM_PROMPT:-}"
flag timeout "${H9_TIMEOUT:-}"
flag max-cost "${H9_MAX_COST:-}"
flag output-schema "${H9_OUTPUT_SCHEMA:-}"
flag model "${H9_MODEL:-}"
flag base-url "${H9_BASE_URL:-}"
flag approval-mode "${H9_APPROVAL_MODE:-}"
flag max-turns "${H9_MAX_TURNS:-}"

"$binary" "${args[@]}" </dev/null >"$events"
code=$?

# The last line of a run is its result (docs/HEADLESS.md); a run that could not start
# at all (a bad flag) wrote none.
result_line=$(grep '"type":"result"' "$events" | tail -n 1)
session_id=$(jq -r 'select(.type == "session_configured") | .session_id // empty' "$events" | head -n 1)
field() { # field JQ: from the result line, empty when there is none
    [[ -n "$result_line" ]] && jq -r "$1" <<<"$result_line"
}
result=$(field '.result // ""')
is_error=$(field 'if .is_error == false then "false" else "true" end')
error_kind=$(field '.error.kind // ""')
cost=$(field '.session_usage.cost_usd // ""')
if [[ -n "$session_id" ]] && "$binary" sessions export "$session_id" --format md -o "$export_file" </dev/null; then
    export_path=$export_file
else
    export_path=""
fi

# A multi-line value, between delimiters that cannot occur in it.
delimiter="H9_$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')"
{
    echo "exit_code=$code"
    echo "is_error=${is_error:-true}"
    echo "error_kind=$error_kind"
    echo "cost_usd=$cost"
    echo "session_id=$session_id"
    echo "session_export=$export_path"
    echo "events=$events"
    echo "result<<$delimiter"
    echo "$result"
    echo "$delimiter"
} >>"$GITHUB_OUTPUT"

if [[ "${H9_COMMENT:-false}" == "true" && -n "${H9_PR_NUMBER:-}" ]]; then
    body="$out_dir/comment.md"
    {
        if [[ "$code" == 0 ]]; then
            echo "**harness9** finished${cost:+ (\$$cost)}:"
        else
            echo "**harness9** stopped with exit code $code${error_kind:+ ($error_kind)}:"
        fi
        echo
        echo "$result"
    } >"$body"
    if ! GH_TOKEN=${H9_GITHUB_TOKEN:-} gh pr comment "$H9_PR_NUMBER" --body-file "$body"; then
        echo "harness9 action: could not comment on pull request $H9_PR_NUMBER" >&2
    fi
fi
exit "$code"
