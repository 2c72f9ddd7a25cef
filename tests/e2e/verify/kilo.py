#!/usr/bin/env python3
"""Verify lidguard against the REAL Kilo CLI (offline, loopback only): OpenCode's scenarios from
opencode.py, run with Kilo — OpenCode's fork with the same plugin API, server and run mode.

Usage (as root; `tests/e2e/verify/run.sh kilo` builds lidguard first, then runs this):
    kilo.py [scenario ...] [--out DIR]
    kilo.py --list

`lidguard hook-install --provider kilo` writes lidguard's plugin into Kilo's config directory
($XDG_CONFIG_HOME/kilo/plugins/, or $KILO_CONFIG_DIR/plugins/); the project's kilo.json points
Kilo at the fake chat-completions server (tests/e2e/fakemodel_chat.py on 127.0.0.1).

Scenarios:
  kilo-run             `kilo run`, one bash call, lid open, the plugin in $KILO_CONFIG_DIR: the
                       turn is tracked from chat.message to session.idle
  kilo-serve-deny      `kilo serve`, permission {bash: ask}, lid closed, policy deny: the plugin
                       rejects with lidguard's message, which the model reads; no file is made
  kilo-serve-allow     as above, policy allow: the plugin answers once and the file is made
  kilo-serve-lid-open  lid open: nothing is answered, the session waits (soft-locked)
  kilo-serve-interrupt the turn is aborted while bash runs: the session ends at once

Prints PASS/FAIL per check and finally `N passed, M failed`; exits 1 on any failure.
"""

import opencode
from harness import cli
from harness.clients import KILO, KILO_VERSION
from harness.run import FAKE

opencode.FLAVOR = opencode.Flavor("kilo", KILO, KILO_VERSION, "@kilocode/plugin", "KILO",
                                  "https://app.kilo.ai/config.json")

SCENARIOS = [("kilo-run", opencode.opencode_run),
             ("kilo-serve-deny", lambda root: opencode.opencode_serve_permission(root, "deny")),
             ("kilo-serve-allow", lambda root: opencode.opencode_serve_permission(root, "allow")),
             ("kilo-serve-lid-open", lambda root: opencode.opencode_serve_permission(root, "open")),
             ("kilo-serve-interrupt", opencode.opencode_serve_interrupt)]

if __name__ == "__main__":
    cli.main(__file__, __doc__, f"lidguard vs Kilo CLI {KILO_VERSION}", [FAKE, KILO], SCENARIOS)
