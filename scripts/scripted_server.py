"""Starting the scripted OpenAI-compatible server (/work/shared/tools/mockllm.py) on a
free 127.0.0.1 port for the benchmark scripts, and waiting until it answers."""

import socket
import subprocess
import sys
import time
import urllib.request


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(mock, script, log, extra=()):
    """Starts the server with `script` and `log` (and `extra` flags); returns the process
    and its base URL once /v1/models answers (exits the script after 10 s without)."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, mock, "--port", str(port), "--script", script, "--log", log, *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/v1"
    end = time.time() + 10
    while time.time() < end:
        try:
            urllib.request.urlopen(url + "/models", timeout=1).read()
            return server, url
        except OSError:
            time.sleep(0.05)
    server.terminate()
    sys.exit("the scripted server did not start")
