#!/usr/bin/env bash
# harness9 against real MCP servers that nobody here wrote, end to end:
#   @modelcontextprotocol/server-everything  (npm; over stdio, and over streamable HTTP)
#   @modelcontextprotocol/server-filesystem  (npm; stdio, on a temporary directory)
#   mcp-server-time                          (PyPI; stdio)
#   mcp-server-git                           (PyPI; stdio, on a temporary git repository)
#
# Installs them into $MCP_REAL_DIR (default /tmp/h9-mcp-real; never into the repository):
# the npm packages with `npm install --prefix`, run with node directly (no npx at run
# time), the PyPI ones in a venv (`python3 -m venv`). Their exact installed versions go to
# $MCP_REAL_DIR/versions.txt and are printed. server-everything is also started in
# streamable HTTP mode on 127.0.0.1 (a free port; a `--import` preload makes its
# `app.listen(PORT)` bind the loopback address only).
#
# For each of the five configurations, harness9 runs in print mode (`-p`, full-auto)
# against the scripted OpenAI-compatible server (/work/shared/tools/mockllm.py, or
# $MOCKLLM) twice:
#   1. discovery: the model calls use_skill("mcp:NAME") and answers; the tools of the
#      second request give the real tool names (`mcp__NAME__TOOL`);
#   2. the real run: use_skill("mcp:NAME"), then real tools of that server by the names
#      read in step 1 (everything: echo, get-sum, then its resources tool: list and read
#      one; filesystem: list_directory and read_text_file/read_file of a file made here;
#      time: get_current_time for Europe/Paris; git: git_status), then a text answer.
# From the server's request log it checks that the first request has no tool of the
# server and the second has them, that the system prompt is byte-identical across all
# requests, and that the tool results hold the real answers (the echoed token, 42, the
# resource's text, the file's content, the current time in Paris, `On branch`).
# Then it tries an MCP prompt as a slash command (`/everything:simple-prompt`), which is
# reported as SKIP where this harness9 has no such commands.
#
# Prints PASS/FAIL per configuration and exits 1 on any FAIL (the run's files are then
# kept and their path printed: harness9's logs are in home/logs/, mcp/NAME.log per server).
#
#   scripts/mcp_real_servers.sh                       # target/debug/harness9
#   HARNESS9_BIN=target/release/harness9 scripts/mcp_real_servers.sh
#   MCP_REAL_LATEST=1 scripts/mcp_real_servers.sh     # newest versions instead of the pins
#   MCP_REAL_SKIP_INSTALL=1 …                         # use what $MCP_REAL_DIR has
#   MCP_REAL_ONLY="time git" …                        # some configurations only
#
# Needs node + npm, python3 (with venv), git, and the npm and PyPI registries for the
# install. Nothing but 127.0.0.1 is contacted after it.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=${MCP_REAL_DIR:-/tmp/h9-mcp-real}
BIN=${HARNESS9_BIN:-$ROOT/target/debug/harness9}
MOCK=${MOCKLLM:-/work/shared/tools/mockllm.py}
PY=${PYTHON:-python3}
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
ONLY=${MCP_REAL_ONLY:-everything everything_http filesystem time git}

# The versions this script was last run against (docs/MCP.md, "Real servers").
EVERYTHING_VERSION=2026.8.31
FILESYSTEM_VERSION=2026.8.31
TIME_VERSION=2026.10.19
GIT_VERSION=2026.10.19
if [[ -n ${MCP_REAL_LATEST:-} ]]; then
    npm_pin() { echo "$1"; }
    pip_pin() { echo "$1"; }
else
    npm_pin() { echo "$1@$2"; }
    pip_pin() { echo "$1==$2"; }
fi

[[ -x $BIN ]] || { echo "no harness9 binary at $BIN (cargo build, or set HARNESS9_BIN)" >&2; exit 2; }
BIN=$(realpath "$BIN")
[[ -f $MOCK ]] || { echo "no scripted server at $MOCK (set MOCKLLM)" >&2; exit 2; }
NODE=$(command -v node) || { echo "node is needed" >&2; exit 2; }

# --- install ------------------------------------------------------------------------
mkdir -p "$DIR"
if [[ -z ${MCP_REAL_SKIP_INSTALL:-} ]]; then
    echo "installing into $DIR"
    timeout 600 npm install --prefix "$DIR/npm" --no-audit --no-fund --loglevel=error \
        "$(npm_pin @modelcontextprotocol/server-everything "$EVERYTHING_VERSION")" \
        "$(npm_pin @modelcontextprotocol/server-filesystem "$FILESYSTEM_VERSION")" >/dev/null
    [[ -x $DIR/venv/bin/python ]] || "$PY" -m venv "$DIR/venv"
    timeout 600 "$DIR/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        "$(pip_pin mcp-server-time "$TIME_VERSION")" "$(pip_pin mcp-server-git "$GIT_VERSION")"
fi
MODS=$DIR/npm/node_modules/@modelcontextprotocol
EVERYTHING_JS=$MODS/server-everything/dist/index.js
FILESYSTEM_JS=$MODS/server-filesystem/dist/index.js
TIME_BIN=$DIR/venv/bin/mcp-server-time
GIT_BIN=$DIR/venv/bin/mcp-server-git
for f in "$EVERYTHING_JS" "$FILESYSTEM_JS" "$TIME_BIN" "$GIT_BIN"; do
    [[ -e $f ]] || { echo "not installed: $f" >&2; exit 2; }
done

npm_version() { "$NODE" -p "require('$MODS/$1/package.json').version"; }
pip_version() { "$DIR/venv/bin/python" -c "import importlib.metadata as m; print(m.version('$1'))"; }
{
    echo "@modelcontextprotocol/server-everything $(npm_version server-everything)"
    echo "@modelcontextprotocol/server-filesystem $(npm_version server-filesystem)"
    echo "@modelcontextprotocol/sdk $(npm_version sdk) (npm, used by both)"
    echo "mcp-server-time $(pip_version mcp-server-time)"
    echo "mcp-server-git $(pip_version mcp-server-git)"
    echo "mcp $(pip_version mcp) (PyPI, the Python SDK both use)"
    echo "node $("$NODE" --version), $("$DIR/venv/bin/python" --version)"
    echo "harness9 $("$BIN" --version 2>/dev/null | head -1) ($BIN)"
} > "$DIR/versions.txt"
echo "versions:"
sed 's/^/  /' "$DIR/versions.txt"

# --- the run's files and background processes ---------------------------------------
WORK=$(mktemp -d /tmp/h9-mcp-real-run.XXXXXX)
PIDS=()
FAILED=0
cleanup() {
    local rc=$? pid
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    if [[ $rc -eq 0 && $FAILED -eq 0 && -z ${MCP_REAL_KEEP:-} ]]; then
        rm -rf "$WORK"
    else
        echo "the run's files (logs, scripts, harness9 home): $WORK"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Waits until 127.0.0.1:$1 accepts connections (at most $2 seconds).
wait_port() {
    "$PY" - "$1" "$2" <<'EOF'
import socket, sys, time
port, limit = int(sys.argv[1]), float(sys.argv[2])
end = time.time() + limit
while time.time() < end:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit(1)
EOF
}

# The JSON work: discovery, the real run's script and what it must show, the checks.
cat > "$WORK/h9check.py" <<'EOF'
import datetime, json, re, sys, zoneinfo

def chats(log):
    out = []
    with open(log) as f:
        for line in f:
            r = json.loads(line)
            if r.get("method") == "POST" and r["path"].endswith("/chat/completions"):
                out.append(r["body"])
    return out

def tool_names(body):
    return [t["function"]["name"] for t in body.get("tools") or []]

def system(body):
    return [m.get("content") for m in body["messages"] if m.get("role") == "system"]

def results(body):
    """Tool results of the last request, by call id, in order."""
    return [(m.get("tool_call_id"), m.get("content") if isinstance(m.get("content"), str)
             else json.dumps(m.get("content"))) for m in body["messages"] if m.get("role") == "tool"]

def call(name, args, cid):
    return {"tool_calls": [{"id": cid, "name": name, "arguments": args}]}

def cmd_discover_script(server, out):
    json.dump([call("use_skill", {"skill_name": f"mcp:{server}"}, "c0"), {"text": "loaded"}],
              open(out, "w"))

def cmd_discover(log, server, out):
    reqs = chats(log)
    if len(reqs) < 2:
        sys.exit(f"discovery: {len(reqs)} chat request(s), expected 2")
    prefix = f"mcp__{server}__"
    names = [n for n in tool_names(reqs[1]) if n.startswith(prefix)]
    json.dump(names, open(out, "w"))
    print(f"    {len(names)} tools: {', '.join(n[len(prefix):] for n in names)}")

def pick(names, server, *wanted):
    prefix = f"mcp__{server}__"
    for w in wanted:
        if prefix + w in names:
            return prefix + w
    for w in wanted:
        for n in names:
            if n.startswith(prefix) and w in n[len(prefix):]:
                return n
    sys.exit(f"none of {wanted} among {server}'s tools: {names}")

def cmd_plan(kind, server, names_file, script_out, expect_out, *extra):
    names = json.load(open(names_file))
    steps = [call("use_skill", {"skill_name": f"mcp:{server}"}, "c0")]
    expect = []   # (call id, tool, [substring or /regex/ ...])
    def step(tool, args, *must):
        cid = f"c{len(steps)}"
        steps.append(call(tool, args, cid))
        expect.append([cid, tool, args, list(must)])
    if kind == "everything":
        token, doc_uri, doc_line = extra
        step(pick(names, server, "echo"), {"message": f"hello from harness9 {token}"},
             f"hello from harness9 {token}")
        step(pick(names, server, "get-sum", "add"), {"a": 19, "b": 23}, "/\\b42\\b/")
        res = pick(names, server, "resources")
        step(res, {}, doc_uri)
        step(res, {"uri": doc_uri}, doc_line)
    elif kind == "filesystem":
        root, fname, content = extra
        step(pick(names, server, "list_directory"), {"path": root}, f"[FILE] {fname}")
        step(pick(names, server, "read_text_file", "read_file"), {"path": f"{root}/{fname}"},
             content, "once:" + content)
    elif kind == "time":
        step(pick(names, server, "get_current_time"), {"timezone": "Europe/Paris"},
             "Europe/Paris", "@paris-now")
    elif kind == "git":
        repo, untracked = extra
        step(pick(names, server, "git_status"), {"repo_path": repo}, "On branch", untracked)
    else:
        sys.exit(f"unknown kind {kind}")
    steps.append({"text": f"final answer for {server}"})
    json.dump(steps, open(script_out, "w"))
    json.dump({"server": server, "names": names, "expect": expect}, open(expect_out, "w"))

def paris_now_ok(text):
    """The result's datetime is the current time in Paris (within 10 minutes)."""
    m = re.search(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?[+-]\d\d:\d\d", text)
    if not m:
        return False, "no ISO datetime with an offset"
    got = datetime.datetime.fromisoformat(m.group(0))
    now = datetime.datetime.now(zoneinfo.ZoneInfo("Europe/Paris"))
    ok = abs((got - now).total_seconds()) < 600 and got.utcoffset() == now.utcoffset()
    return ok, f"{m.group(0)} (Paris now: {now.isoformat(timespec='seconds')})"

def cmd_check(log, expect_file, stdout_file):
    spec = json.load(open(expect_file))
    server, names = spec["server"], spec["names"]
    prefix = f"mcp__{server}__"
    reqs = chats(log)
    problems, notes = [], []
    want = 2 + len(spec["expect"])
    if len(reqs) != want:
        problems.append(f"{len(reqs)} chat requests, expected {want}")
    if reqs:
        if any(n.startswith(prefix) for n in tool_names(reqs[0])):
            problems.append("the first request already has the server's tools")
        lines = [l for s in system(reqs[0]) for l in (s or "").splitlines()
                 if l.startswith(f"- mcp:{server}:")]
        if not lines:
            problems.append(f"no `- mcp:{server}:` line in the system prompt")
        else:
            notes.append(f"index line: {lines[0][:160]}")
        prompts = {json.dumps(system(r)) for r in reqs}
        if len(prompts) != 1:
            problems.append(f"the system prompt differs between requests ({len(prompts)} versions)")
        else:
            notes.append(f"system prompt identical in all {len(reqs)} requests "
                         f"({len(json.dumps(system(reqs[0])))} bytes)")
    if len(reqs) >= 2:
        second = [n for n in tool_names(reqs[1]) if n.startswith(prefix)]
        if not second:
            problems.append("the second request has none of the server's tools")
        else:
            notes.append(f"second request: {len(second)} of its tools "
                         f"({len(tool_names(reqs[1]))} tools in all)")
        if sorted(second) != sorted(names):
            problems.append("the tools differ from the discovery run's")
    got = dict(results(reqs[-1])) if reqs else {}
    for cid, tool, args, musts in spec["expect"]:
        text = got.get(cid)
        short = tool[len(prefix):]
        if text is None:
            problems.append(f"no result for {short} ({cid})")
            continue
        for must in musts:
            if must == "@paris-now":
                ok, why = paris_now_ok(text)
                notes.append(f"{short}: {why}")
                if not ok:
                    problems.append(f"{short}: not the current time in Paris: {why}")
            elif must.startswith("/") and must.endswith("/"):
                if not re.search(must[1:-1], text):
                    problems.append(f"{short}{json.dumps(args)}: no match for {must} in {text[:300]!r}")
            elif must.startswith("once:"):
                n = text.count(must[5:])
                if n != 1:
                    problems.append(f"{short}: {must[5:]!r} appears {n} times (once expected)")
            elif must not in text:
                problems.append(f"{short}{json.dumps(args)}: {must!r} not in {text[:300]!r}")
        first = " ".join(text.split())[:110]
        notes.append(f"{short} {json.dumps(args)} -> {first}")
    out = open(stdout_file).read()
    if f"final answer for {server}" not in out:
        problems.append(f"harness9's output lacks the final answer: {out[-300:]!r}")
    for n in notes:
        print(f"    {n}")
    for p in problems:
        print(f"    FAIL: {p}")
    sys.exit(1 if problems else 0)

def cmd_prompt_check(log, want):
    reqs = chats(log)
    if not reqs:
        sys.exit("no chat request")
    users = [m for m in reqs[0]["messages"] if m.get("role") == "user"]
    text = json.dumps(users)
    print(f"    first request's user message(s): {text[:200]}")
    sys.exit(0 if want in text else 1)

if __name__ == "__main__":
    globals()["cmd_" + sys.argv[1].replace("-", "_")](*sys.argv[2:])
EOF
check() { "$PY" "$WORK/h9check.py" "$@"; }

# --- the servers' surroundings --------------------------------------------------------
TOKEN=tok-$RANDOM$RANDOM
FSROOT=$WORK/fsroot
mkdir -p "$FSROOT"
printf 'h9-fs-content-%s\nsecond line\n' "$TOKEN" > "$FSROOT/hello.txt"
REPO=$WORK/repo
mkdir -p "$REPO"
git -C "$REPO" init -q -b main
git -C "$REPO" -c user.name=h9 -c user.email=h9@example.invalid commit -q --allow-empty -m init
echo new > "$REPO/untracked-$TOKEN.txt"
PROJECT=$WORK/project
mkdir -p "$PROJECT"
DOC_URI=demo://resource/static/document/instructions.md
DOC_LINE=$(grep -m1 -v '^[[:space:]]*$' "$MODS/server-everything/dist/docs/instructions.md" | sed 's/^#* *//' | cut -c1-60)

# server-everything over streamable HTTP, on 127.0.0.1 only.
cat > "$WORK/loopback.mjs" <<'EOF'
// Makes listen(port[, cb]) without a host bind 127.0.0.1 instead of every address.
import net from "node:net";
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  const isPort = typeof port === "number" || (typeof port === "string" && /^\d+$/.test(port));
  if (isPort && typeof args[1] !== "string") args.splice(1, 0, "127.0.0.1");
  return listen.apply(this, args);
};
EOF
HTTP_PORT=$(free_port)
PORT=$HTTP_PORT "$NODE" --import "file://$WORK/loopback.mjs" "$EVERYTHING_JS" streamableHttp \
    > "$WORK/everything-http.log" 2>&1 &
PIDS+=($!)
if ! wait_port "$HTTP_PORT" 20; then
    echo "server-everything (streamableHttp) did not listen on 127.0.0.1:$HTTP_PORT:" >&2
    cat "$WORK/everything-http.log" >&2
    FAILED=1
    exit 1
fi
echo "server-everything streamable HTTP: http://127.0.0.1:$HTTP_PORT/mcp ($(grep -m1 -i listening "$WORK/everything-http.log" || true))"

HOME9=$WORK/home
mkdir -p "$HOME9"
cat > "$HOME9/config.toml" <<EOF
[mcp_servers.everything]
command = "$NODE"
args = ["$EVERYTHING_JS", "stdio"]

[mcp_servers.everything_http]
url = "http://127.0.0.1:$HTTP_PORT/mcp"

[mcp_servers.filesystem]
command = "$NODE"
args = ["$FILESYSTEM_JS", "$FSROOT"]

[mcp_servers.time]
command = "$TIME_BIN"

[mcp_servers.git]
command = "$GIT_BIN"
args = ["--repository", "$REPO"]
EOF

# Runs harness9 once: $1 a name for the run's files, $2 the reply script, $3 the prompt.
# Leaves $WORK/$1.log (requests), $1.out (stdout), $1.err (stderr); returns its status.
run_h9() {
    local run=$1 script=$2 prompt=$3 port mock status=0
    port=$(free_port)
    "$PY" "$MOCK" --host 127.0.0.1 --port "$port" --script "$script" --log "$WORK/$run.log" \
        > "$WORK/$run.mock" 2>&1 &
    mock=$!
    PIDS+=("$mock")
    if ! wait_port "$port" 10; then
        echo "    the scripted server did not start" >&2
        return 1
    fi
    : > "$WORK/$run.log"
    timeout "$RUN_TIMEOUT" env OPENAI_BASE_URL="http://127.0.0.1:$port/v1" OPENAI_API_KEY=x \
        HARNESS9_HOME="$HOME9" NO_COLOR=1 \
        "$BIN" --model m -C "$PROJECT" --approval-mode full-auto -p "$prompt" \
        < /dev/null > "$WORK/$run.out" 2> "$WORK/$run.err" || status=$?
    kill "$mock" 2>/dev/null || true
    wait "$mock" 2>/dev/null || true
    return $status
}

declare -A KIND=([everything]=everything [everything_http]=everything [filesystem]=filesystem
                 [time]=time [git]=git)
declare -A EXTRA=([everything]="$TOKEN $DOC_URI" [everything_http]="$TOKEN $DOC_URI"
                  [filesystem]="$FSROOT hello.txt h9-fs-content-$TOKEN" [time]="" [git]="$REPO untracked-$TOKEN.txt")
declare -A RESULT=()

for name in $ONLY; do
    [[ -n ${KIND[$name]:-} ]] || { echo "unknown configuration $name" >&2; exit 2; }
    echo "== $name"
    result=PASS
    check discover-script "$name" "$WORK/$name.discover.json"
    if ! run_h9 "$name.discover" "$WORK/$name.discover.json" "load mcp:$name"; then
        echo "    discovery run failed: $(tail -c 600 "$WORK/$name.discover.err")"
        result=FAIL
    elif ! check discover "$WORK/$name.discover.log" "$name" "$WORK/$name.names.json"; then
        result=FAIL
    else
        # shellcheck disable=SC2086
        extra=(${EXTRA[$name]})
        [[ ${KIND[$name]} == everything ]] && extra+=("$DOC_LINE")
        check plan "${KIND[$name]}" "$name" "$WORK/$name.names.json" "$WORK/$name.script.json" \
            "$WORK/$name.expect.json" "${extra[@]}"
        if ! run_h9 "$name" "$WORK/$name.script.json" "use the $name server"; then
            echo "    harness9 failed: $(tail -c 600 "$WORK/$name.err")"
            result=FAIL
        fi
        check check "$WORK/$name.log" "$WORK/$name.expect.json" "$WORK/$name.out" || result=FAIL
    fi
    if [[ $result == FAIL ]]; then
        FAILED=1
        for f in "$HOME9/logs/mcp/$name.log"; do
            [[ -f $f ]] && { echo "    $f (end):"; tail -n 8 "$f" | sed 's/^/      /'; }
        done
    fi
    RESULT[$name]=$result
    echo "$result $name"
done

# --- prompts as slash commands ------------------------------------------------------------
PROMPT_RESULT=SKIP
if [[ " $ONLY " == *" everything "* ]]; then
    echo "== prompt /everything:simple-prompt"
    echo '[{"text": "prompt answered"}]' > "$WORK/prompt.json"
    status=0
    run_h9 prompt "$WORK/prompt.json" "/everything:simple-prompt" || status=$?
    if grep -q "unknown command" "$WORK/prompt.err" "$WORK/prompt.out"; then
        echo "    this harness9 has no MCP prompt commands: $(grep -h -m1 'unknown command' "$WORK/prompt.err" "$WORK/prompt.out")"
    elif [[ $status -eq 0 ]] && check prompt-check "$WORK/prompt.log" "This is a simple prompt without arguments."; then
        PROMPT_RESULT=PASS
    else
        echo "    status $status: $(tail -c 400 "$WORK/prompt.err")"
        PROMPT_RESULT=FAIL
        FAILED=1
    fi
    echo "$PROMPT_RESULT prompt /everything:simple-prompt"
fi

echo "== summary"
for name in $ONLY; do echo "${RESULT[$name]} $name"; done
echo "$PROMPT_RESULT prompts (/everything:simple-prompt)"
[[ $FAILED -eq 0 ]]
