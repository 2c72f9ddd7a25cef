"""What every verification driver shares (python3 stdlib only); the drivers beside this folder are
one per agent.

- cli: the command line, the private network namespace, the scenario loop, `N passed, M failed`
- results: one PASS/FAIL line per check
- clients: the agent CLIs: npm package, pinned version, the file that runs each (also for run.sh
  and install_clients.sh)
- constants: where lidguard and the test helpers are; the figures the drivers share
- procs: processes started, found by their environment and stopped by pid
- run: a scenario on the chat-completions fake model (`Run`: Copilot, OpenCode, Kilo, Gemini,
  Qwen, Cline, Droid) and its checks
- scene: a scenario on the capture fake model (`Ctx`: Claude Code, Codex) and its checks
- screen: the agents' terminal UIs under a private tmux server
- ask: ask before sleep, with the test receiver (receiver)
- phone: the ntfy stand-in and a thumb on it (the remote-decision scenarios)
- sshremote: a real sshd on loopback, the far side of `lidguard ssh`
- lgverify: what lidguard itself says (hook-install, hook-status, hook-events, the status poller)
"""
