#!/usr/bin/env python3
"""How fast `harness9 -c -p …` sends its first request on a long saved session.

1. Builds the session with harness9 itself: TURNS piped turns against the scripted
   server (/work/shared/tools/mockllm.py, or --mock PATH) on 127.0.0.1, each with a
   `bash` call printing OUTPUT bytes and an answer, `context_window = WINDOW` (so the
   file holds elided outputs' originals and compactions, as a real one would).
2. Runs `harness9 -c -p "one more"` RUNS times in that project, and `harness9 -p "one
   more"` RUNS times in an empty project, and prints the median time from process start
   (just before spawning) to the first chat request's arrival at the server (the
   server's own arrival timestamp), and the median peak RSS.

    scripts/bench_resume.py --bin target/release/harness9 --turns 1000 --runs 20

Loopback only; nothing else is contacted.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

from scripted_server import start_server


def chat_arrivals(log):
    """Arrival times of the chat requests logged so far (a line still being written is
    left for later)."""
    out = []
    with open(log) as f:
        for raw in f:
            try:
                r = json.loads(raw)
            except ValueError:
                break
            if r["path"].endswith("/chat/completions"):
                out.append(r["t_ns"])
    return out


def new_arrivals(log, before, deadline=10.0):
    """Waits until the server has logged a chat request after the first `before`."""
    end = time.time() + deadline
    while time.time() < end:
        arrivals = chat_arrivals(log)[before:]
        if arrivals:
            return arrivals
        time.sleep(0.01)
    sys.exit("the server logged no request")


def timed_runs(binary, url, cwd, env, args, runs, log):
    firsts, rss = [], []
    for _ in range(runs):
        before = len(chat_arrivals(log))
        t0 = time.time_ns()
        p = subprocess.run(
            ["/usr/bin/time", "-v", binary, "--base-url", url, "--model", "m"] + args,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env=env, cwd=cwd,
        )
        if p.returncode != 0:
            sys.exit(p.stderr.decode()[-2000:])
        arrivals = new_arrivals(log, before)
        firsts.append((arrivals[0] - t0) / 1e6)
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr.decode())
        rss.append(int(m.group(1)) / 1024)
    return statistics.median(firsts), min(firsts), statistics.median(rss)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--mock", default="/work/shared/tools/mockllm.py")
    ap.add_argument("--turns", type=int, default=1000)
    ap.add_argument("--output", type=int, default=8192, help="bytes of tool output per turn")
    ap.add_argument("--window", type=int, default=32000)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    binary = os.path.abspath(args.bin)

    work = tempfile.mkdtemp(prefix="h9-resume-")
    home, proj, empty = (os.path.join(work, d) for d in ("home", "proj", "empty"))
    for d in (home, proj, empty):
        os.makedirs(d)
    with open(os.path.join(home, "config.toml"), "w") as f:
        f.write(f"context_window = {args.window}\nmax_retries = 0\n")
    with open(os.path.join(proj, "out.txt"), "w") as f:
        f.write(("y" * 63 + "\n") * (args.output // 64 + 1))
    replies = []
    for i in range(args.turns):
        replies.append({"tool_calls": [{"name": "bash", "arguments": {"command": f"head -c {args.output} out.txt"}}]})
        replies.append({"text": f"turn {i + 1} done"})
    script = os.path.join(work, "script.json")
    with open(script, "w") as f:
        json.dump({"replies": replies, "rules": [
            {"match": "You summarize a conversation", "reply": {"text": "## Goal\nRead out.txt.\n## Open tasks\nGo on."}}
        ]}, f)
    log = os.path.join(work, "log.jsonl")
    server, url = start_server(args.mock, script, log)
    env = dict(os.environ, HARNESS9_HOME=home, OPENAI_API_KEY="k", NO_COLOR="1")
    try:
        t0 = time.time()
        prompts = "".join(f"turn {i + 1}: read out.txt\n" for i in range(args.turns))
        p = subprocess.run(
            [binary, "--base-url", url, "--model", "m", "--approval-mode", "full-auto"],
            input=prompts.encode(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=proj,
        )
        if p.returncode != 0:
            sys.exit(p.stderr.decode()[-2000:])
        built = time.time() - t0
        files = [os.path.join(dp, f) for dp, _, fs in os.walk(os.path.join(home, "sessions")) for f in fs]
        size = sum(os.path.getsize(f) for f in files)
        with open(files[0]) as f:
            lines = f.readlines()
        compactions = sum(1 for l in lines if l.startswith('{"type":"compacted"'))
        print(f"session: {args.turns} turns, {len(lines)} records, {size / 1e6:.1f} MB, "
              f"{compactions} compactions (built in {built:.0f} s)")
        resumed = timed_runs(binary, url, proj, env, ["-c", "-p", "one more"], args.runs, log)
        fresh = timed_runs(binary, url, empty, env, ["-p", "one more"], args.runs, log)
    finally:
        server.terminate()
        server.wait()
    print(f"-c -p on the saved session: first request median {resumed[0]:.1f} ms "
          f"(min {resumed[1]:.1f}), peak RSS median {resumed[2]:.1f} MB")
    print(f"-p, new session:            first request median {fresh[0]:.1f} ms "
          f"(min {fresh[1]:.1f}), peak RSS median {fresh[2]:.1f} MB")


if __name__ == "__main__":
    main()
