"""Starts the real gpucost binary on a free loopback port for the Python tests."""
import json
import os
import subprocess
import time


def start(binary, extra_args=(), embedded=True, timeout_s=20, stdout=None):
    """Runs `binary --port 0 --access-log false *extra_args` and reads the port from its
    `listening` log line. `embedded` drops DATABASE_URL from the environment. Returns
    (process, port); port is None (and the process killed) when no port was logged in time."""
    env = {k: v for k, v in os.environ.items() if not (embedded and k == "DATABASE_URL")}
    proc = subprocess.Popen([binary, "--port", "0", "--access-log", "false", *extra_args],
                            stdout=stdout, stderr=subprocess.PIPE, text=True, env=env)
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("msg") == "listening":
            return proc, entry["port"]
    proc.kill()
    return proc, None
