#!/usr/bin/env python3
"""Time and peak RSS of one long single-line answer, in pipe mode and with -p.

Starts the scripted server (/work/shared/tools/mockllm.py, or --mock PATH) on
127.0.0.1 with one reply: SIZE MB of text on one line, streamed in CHUNK-character
deltas. Then runs the binary under /usr/bin/time -v, RUNS times per size and mode,
and prints the median wall time and peak RSS. With several --bin, the binaries take
turns run by run (A, B, A, B, ...), so the machine's load falls on all alike. Each
binary and mode is also run answering "hi" (a few bytes): "× size" is (peak RSS − that
run's) ÷ the answer's size, what the answer costs in memory per byte of it.

    scripts/bench_long_answer.py --bin target/release/harness9 --sizes 1,2,4,8 --runs 5
    scripts/bench_long_answer.py --bin target/release/harness9 --sizes 100 --runs 3 --modes pipe,print
    scripts/bench_long_answer.py --bin OLD --bin NEW --sizes 4 --runs 15 --chunk 2048

--markup puts a `code span` at the start of the line (the line then cannot be streamed
as prose and is rendered as a whole), otherwise the line is plain words.
Loopback only; nothing else is contacted.
"""

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answer(size_mb, markup):
    if size_mb == 0:
        return "hi"
    word = "lorem ipsum dolor sit amet "
    n = size_mb * 1_000_000
    head = "see `code` and " if markup else ""
    body = (word * (n // len(word) + 1))[: n - len(head)]
    return head + body


def run_once(binary, url, mode, home, cwd):
    cmd = ["/usr/bin/time", "-v", binary, "--base-url", url, "--model", "m"]
    if mode == "print":
        cmd += ["-p", "hi"]
        stdin = subprocess.DEVNULL
    else:
        stdin = subprocess.PIPE
    env = dict(os.environ, HARNESS9_HOME=home, NO_COLOR="1")
    p = subprocess.run(
        cmd,
        input=b"hi\n" if mode == "pipe" else None,
        stdin=stdin if mode == "print" else None,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=cwd,
    )
    err = p.stderr.decode(errors="replace")
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{err[-2000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", err)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    h, m, s = wall.groups()
    secs = int(h or 0) * 3600 + int(m) * 60 + float(s)
    return secs, int(rss.group(1)) / 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", action="append", required=True)
    ap.add_argument("--mock", default="/work/shared/tools/mockllm.py")
    ap.add_argument("--sizes", default="1,2,4,8", help="MB, comma-separated")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--chunk", type=int, default=256, help="characters per SSE delta")
    ap.add_argument("--modes", default="pipe,print")
    ap.add_argument("--markup", action="store_true")
    args = ap.parse_args()

    binaries = [os.path.abspath(b) for b in args.bin]
    work = tempfile.mkdtemp(prefix="h9-long-")
    home = os.path.join(work, "home")
    cwd = os.path.join(work, "project")
    os.makedirs(home)
    os.makedirs(cwd)
    print(f"chunk {args.chunk}, markup {args.markup}, runs {args.runs}")
    print(f"{'MB':>4} {'mode':>5} {'median s':>9} {'median RSS MB':>14} {'× size':>7}  binary")
    sizes = [int(x) for x in args.sizes.split(",")]
    base_rss = {}
    for size in ([0] if 0 not in sizes else []) + sizes:
        text = answer(size, args.markup)
        script = os.path.join(work, f"script-{size}.json")
        with open(script, "w") as f:
            json.dump({"replies": [], "default": {"text": text, "chunk_size": args.chunk}}, f)
        port = free_port()
        mock = subprocess.Popen(
            [sys.executable, args.mock, "--host", "127.0.0.1", "--port", str(port),
             "--script", script, "--log", os.path.join(work, "log.jsonl")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/_mock/state", timeout=1).read()
                    break
                except OSError:
                    if time.monotonic() > deadline or mock.poll() is not None:
                        sys.exit("the mock server did not start")
                    time.sleep(0.05)
            url = f"http://127.0.0.1:{port}/v1"
            for mode in args.modes.split(","):
                results = {b: [] for b in binaries}
                for _ in range(args.runs):
                    for b in binaries:
                        results[b].append(run_once(b, url, mode, home, cwd))
                for b in binaries:
                    secs = [r[0] for r in results[b]]
                    rss = statistics.median([r[1] for r in results[b]])
                    if size == 0:
                        base_rss[(b, mode)] = rss
                        ratio = ""
                    else:
                        ratio = f"{(rss - base_rss[(b, mode)]) / (size * 1e6 / 2**20):.2f}"
                    print(f"{size:>4} {mode:>5} {statistics.median(secs):>9.2f} {rss:>14.1f} {ratio:>7}  {b}",
                          flush=True)
        finally:
            mock.terminate()
            mock.wait()


if __name__ == "__main__":
    main()
