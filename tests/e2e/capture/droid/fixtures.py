#!/usr/bin/env python3
"""Turn a Factory Droid capture run (tests/e2e/capture/droid/run.sh) into tests/fixtures/droid/*.json:
Gemini's fixture writer with `--agent droid` (the same hook logger and variant rules).

Usage: fixtures.py <capture-dir> [--out DIR] [--date YYYY-MM-DD]
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
os.execvp(sys.executable, [sys.executable, os.path.join(HERE, "..", "gemini", "fixtures.py"),
                           *sys.argv[1:], "--agent", "droid"])
