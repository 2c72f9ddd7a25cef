#!/usr/bin/env python3
"""Turn a Kilo CLI capture run (tests/e2e/capture/kilo/run.sh) into tests/fixtures/kilo/*.json:
OpenCode's fixture writer with `--agent kilo`.

Usage: fixtures.py <capture-dir> [--out DIR] [--date YYYY-MM-DD]
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
os.execvp(sys.executable, [sys.executable, os.path.join(HERE, "..", "opencode", "fixtures.py"),
                           *sys.argv[1:], "--agent", "kilo"])
