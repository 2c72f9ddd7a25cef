#!/usr/bin/env python3
"""Turn a Cline CLI capture run (tests/e2e/capture/cline/run.sh) into tests/fixtures/cline/*.json:
Gemini's fixture writer with `--agent cline` (the same hook logger and variant rules).

Usage: fixtures.py <capture-dir> [--out DIR] [--date YYYY-MM-DD]
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
os.execvp(sys.executable, [sys.executable, os.path.join(HERE, "..", "gemini", "fixtures.py"),
                           *sys.argv[1:], "--agent", "cline"])
