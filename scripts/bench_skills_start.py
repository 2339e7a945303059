#!/usr/bin/env python3
"""Skills at scale: process start → first request, and peak RSS, with 0, 1,000 and 10,000
skills on disk and a warm discovery cache, for one or more harness9 binaries side by
side (A/B, alternating run by run, so the machine's load falls on all alike).

Each skill is `skills/skill-NNNNN/SKILL.md` in the project (a short frontmatter and a
body of about 3 KB, as `cargo bench --bench e2e` makes them). The files are generated
once, then the script waits 2.1 s (files changed more recently are never cached) and
makes two warm-up runs per binary and size, each with its own `HARNESS9_HOME`. Every run
is `harness9 --base-url URL --model m -p hi` against the scripted server
(/work/shared/tools/mockllm.py) on 127.0.0.1; start is taken just before spawning, the
first request's arrival is the server's own timestamp; the peak RSS comes from as many
runs again under `/usr/bin/time -f %M`. Prints medians (and p10/p90) per binary and size.

    scripts/bench_skills_start.py --bin OLD --bin NEW [--runs 30] [--sizes 0,1000,10000]

Loopback only; nothing else is contacted.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scripted_server import start_server  # noqa: E402


def make_skills(root, n):
    body = "Follow these steps carefully.\n" * 100
    for i in range(n):
        d = os.path.join(root, "skills", f"skill-{i:05}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "SKILL.md"), "w") as f:
            f.write(f"---\nname: skill-{i:05}\ndescription: Use when doing task number {i} "
                    f"of the generated set\n---\n\n{body}")


def requests(log):
    out = []
    try:
        with open(log) as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    break
    except FileNotFoundError:
        pass
    return [r for r in out if r.get("path", "").endswith("/chat/completions")]


def wait_requests(log, n, deadline=30.0):
    end = time.time() + deadline
    while time.time() < end:
        got = requests(log)
        if len(got) >= n:
            return got
        time.sleep(0.002)
    sys.exit(f"only {len(requests(log))} of {n} requests arrived")


def run(binary, url, home, project, rss_file=None):
    """One run; its start time, and its peak RSS in MB when `rss_file` is given (then it
    runs under /usr/bin/time, a small process: a child forked from this Python process
    would count Python's own RSS as its peak)."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "HARNESS9_HOME": home,
           "OPENAI_API_KEY": "k", "NO_COLOR": "1"}
    cmd = [binary, "--base-url", url, "--model", "m", "-C", project, "-p", "hi"]
    if rss_file:
        cmd = ["/usr/bin/time", "-f", "%M", "-o", rss_file] + cmd
    t0 = time.time_ns()
    code = subprocess.call(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    if code != 0:
        sys.exit(f"{binary} exited {code}")
    if rss_file:
        with open(rss_file) as f:
            return t0, int(f.read().split()[-1]) / 1024.0
    return t0, None


def stats(values):
    s = sorted(values)
    return statistics.median(s), s[len(s) // 10], s[len(s) * 9 // 10]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", action="append", required=True)
    ap.add_argument("--mock", default="/work/shared/tools/mockllm.py")
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--sizes", default="0,1000,10000")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    tmp = tempfile.mkdtemp(prefix="h9-bench-skills.")
    try:
        projects = {}
        for n in sizes:
            projects[n] = os.path.join(tmp, f"project-{n}")
            os.makedirs(projects[n])
            make_skills(projects[n], n)
        time.sleep(2.1)
        script = os.path.join(tmp, "script.json")
        with open(script, "w") as f:
            json.dump([], f)
        log = os.path.join(tmp, "log.jsonl")
        server, url = start_server(args.mock, script, log)
        try:
            homes = {(b, n): os.path.join(tmp, f"home-{i}-{n}")
                     for i, b in enumerate(args.bin) for n in sizes}
            for (b, n), home in homes.items():
                os.makedirs(home)
                for _ in range(2):
                    run(b, url, home, projects[n])
            seen = len(requests(log))
            start = {k: [] for k in homes}
            rss = {k: [] for k in homes}
            for _ in range(args.runs):
                for n in sizes:
                    for b in args.bin:
                        t0, _ = run(b, url, homes[(b, n)], projects[n])
                        seen += 1
                        first = wait_requests(log, seen)[seen - 1]
                        start[(b, n)].append((first["t_ns"] - t0) / 1e6)
                        _, peak = run(b, url, homes[(b, n)], projects[n],
                                      os.path.join(tmp, "rss"))
                        seen += 1
                        rss[(b, n)].append(peak)
        finally:
            server.terminate()
            server.wait()
        print(f"start → first request and peak RSS, warm discovery cache, {args.runs} runs "
              "each (median, p10–p90)")
        for n in sizes:
            for b in args.bin:
                m, lo, hi = stats(start[(b, n)])
                r, rlo, rhi = stats(rss[(b, n)])
                print(f"  {n:6} skills  {b:40}  {m:7.2f} ms ({lo:.2f}–{hi:.2f})  "
                      f"{r:6.2f} MB ({rlo:.2f}–{rhi:.2f})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
