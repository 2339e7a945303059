#!/usr/bin/env python3
"""A long piped session against a server that refuses prompts over the window.

Starts the scripted server (/work/shared/tools/mockllm.py, or --mock PATH) on 127.0.0.1
with --max-prompt-bytes (4 bytes per token of --window) and a script of TURNS turns: in
each, the model runs `bash` to print about 64 KB of a file, then answers. Summary
requests (compaction) are answered by a rule, without using up the script. Then runs

    harness9 --approval-mode full-auto --output-format stream-json < TURNS prompts

under /usr/bin/time -v with `context_window = WINDOW` in a fresh HARNESS9_HOME, and
prints: turns completed and failed, compactions by trigger, the largest chat request
against the limit, requests refused, peak RSS and wall time.

    scripts/bench_long_session.py --bin target/release/harness9 --turns 300 --window 32000

Loopback only; nothing else is contacted.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from scripted_server import start_server


def script(turns):
    replies = []
    for i in range(turns):
        replies.append(
            {"tool_calls": [{"name": "bash", "arguments": {"command": "head -c 65536 big.txt"}}]}
        )
        replies.append({"text": f"done {i + 1}: the file has {i + 1} lines of interest"})
    summary = (
        "## Goal\nLook at big.txt turn after turn.\n## Constraints\nNone stated.\n"
        "## Decisions\nKeep reading.\n## Files\nbig.txt (read)\n## Open tasks\nGo on."
    )
    rule = {"match": "You summarize a conversation", "reply": {"text": summary}}
    return {"replies": replies, "rules": [rule]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mock", default="/work/shared/tools/mockllm.py")
    ap.add_argument("--turns", type=int, default=300)
    ap.add_argument("--window", type=int, default=32000)
    ap.add_argument("--overflow-style", default="openai", choices=["openai", "llamacpp"])
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)

    work = tempfile.mkdtemp(prefix="h9-long-")
    home = os.path.join(work, "home")
    proj = os.path.join(work, "proj")
    os.makedirs(home)
    os.makedirs(proj)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(f"context_window = {args.window}\nmax_retries = 0\n")
    line = "0123456789abcdef" * 4 + "\n"
    with open(os.path.join(proj, "big.txt"), "w") as f:
        f.write(line * (70_000 // len(line)))
    script_path = os.path.join(work, "script.json")
    with open(script_path, "w") as f:
        json.dump(script(args.turns), f)
    log = os.path.join(work, "log.jsonl")
    limit = args.window * 4
    server, url = start_server(
        args.mock, script_path, log,
        ["--max-prompt-bytes", str(limit), "--overflow-style", args.overflow_style],
    )
    try:
        prompts = "".join(f"turn {i + 1}: look at big.txt again\n" for i in range(args.turns))
        env = dict(os.environ, HARNESS9_HOME=home, OPENAI_API_KEY="k", NO_COLOR="1")
        start = time.time()
        p = subprocess.run(
            ["/usr/bin/time", "-v", args.bin, "--base-url", url, "--model", "m",
             "--approval-mode", "full-auto", "--output-format", "stream-json"],
            input=prompts.encode(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=proj,
        )
        wall = time.time() - start
    finally:
        server.terminate()
        server.wait()

    results = collections.Counter()
    compactions = collections.Counter()
    for raw in p.stdout.decode().splitlines():
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        if event.get("type") == "result":
            results["failed" if event.get("is_error") else "completed"] += 1
        elif event.get("type") == "compacted":
            compactions[event["trigger"]] += 1
            if os.environ.get("BENCH_VERBOSE"):
                print("compacted", event)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr.decode())
    chat = []
    with open(log) as f:
        for raw in f:
            r = json.loads(raw)
            if r["path"].endswith("/chat/completions"):
                chat.append(r)
    refused = sum(1 for r in chat if r["status"] != 200)
    largest = max((r["body_bytes"] for r in chat), default=0)
    total = sum(r["body_bytes"] for r in chat)
    print(f"turns: {args.turns}, window {args.window} tokens, server limit {limit} bytes")
    print(f"exit code: {p.returncode}")
    print(f"results: {results['completed']} completed, {results['failed']} failed")
    print(f"compactions: {sum(compactions.values())} {dict(compactions)}")
    print(f"chat requests: {len(chat)}, refused {refused}, largest {largest} bytes "
          f"({largest / limit:.2f} of the limit), {total / 1e6:.1f} MB sent in total")
    print(f"peak RSS: {int(rss.group(1)) / 1024:.1f} MB" if rss else "peak RSS: ?")
    print(f"wall: {wall:.1f} s")
    if p.returncode != 0:
        sys.stderr.write(p.stderr.decode()[-2000:])


if __name__ == "__main__":
    main()
