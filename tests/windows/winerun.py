"""Running the Windows lidguard.exe under Wine, shared by suite.py and conformance.py."""

import subprocess
import tempfile
from pathlib import Path


def windows_path(p: Path) -> str:
    """Wine maps the Unix root to drive Z:."""
    return "Z:" + str(p).replace("/", "\\")


def run(wine: str, exe: Path, args, env, stdin=b""):
    """`exe args…` with `stdin`; stdout captured, stderr read from a file afterwards: Wine hands
    its Unix stderr on to the processes a program starts (for its debug output), so the daemon a
    command starts would hold a stderr pipe open and the caller would wait for it."""
    with tempfile.TemporaryFile() as err:
        out = subprocess.run(
            [wine, str(exe), *args],
            input=stdin,
            stdout=subprocess.PIPE,
            stderr=err,
            env=env,
            cwd="/",
            timeout=60,
        )
        err.seek(0)
        out.stderr = err.read()
    return out
