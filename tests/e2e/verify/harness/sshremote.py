"""The far side of `lidguard ssh` for the e2e scenarios: a real OpenSSH server on loopback (in the
scenario's network namespace, Debian's openssh-server) with its own host key, and the account
`lgremote` (made by .ci/run) standing for the remote host. What runs there runs as that account,
with its own home: the laptop's lidguard is reached only through the socket sshd forwards."""
import os
import pwd
import shutil
import socket
import subprocess
import time

SSHD = "/usr/sbin/sshd"
REMOTE_USER = "lgremote"


def missing():
    """What this machine lacks for the ssh scenarios, or None."""
    if not os.path.exists(SSHD):
        return f"{SSHD} (apt-get install openssh-server)"
    try:
        pwd.getpwnam(REMOTE_USER)
    except KeyError:
        return f"the account {REMOTE_USER} (.ci/run makes it)"
    return None


def give_to_remote(path):
    """`path` and everything below it become the remote account's."""
    account = pwd.getpwnam(REMOTE_USER)
    for root, dirs, files in os.walk(path):
        for name in [root] + [os.path.join(root, n) for n in dirs + files]:
            os.chown(name, account.pw_uid, account.pw_gid, follow_symlinks=False)


def as_remote(argv, env):
    """`argv` run as the remote account with exactly `env` (as an sshd session would give it)."""
    account = pwd.getpwnam(REMOTE_USER)
    return ["setpriv", f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}", "--init-groups",
            "env", "-i", *[f"{k}={v}" for k, v in env.items()], *argv]


class Sshd:
    """sshd on 127.0.0.1 (a free port), key authentication only, Unix-socket forwarding allowed."""

    def __init__(self, run):
        self.dir = os.path.join(run, "sshd")
        os.makedirs(self.dir, exist_ok=True)
        os.chmod(self.dir, 0o755)
        for key in ("host", "client"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", os.path.join(self.dir, key)],
                           check=True)
        keys = os.path.join(self.dir, "authorized_keys")
        shutil.copy(os.path.join(self.dir, "client.pub"), keys)
        os.chmod(keys, 0o644)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        config = os.path.join(self.dir, "sshd_config")
        with open(config, "w") as f:
            f.write(f"Port {self.port}\nListenAddress 127.0.0.1\nHostKey {self.dir}/host\nPidFile none\n"
                    f"AuthorizedKeysFile {keys}\nStrictModes no\nUsePAM no\nPasswordAuthentication no\n"
                    "KbdInteractiveAuthentication no\nAllowStreamLocalForwarding yes\n")
        os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege separation directory
        self.log = os.path.join(self.dir, "sshd.log")
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen([SSHD, "-D", "-e", "-f", config], stderr=log)
        deadline = time.time() + 10
        while time.time() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"sshd did not listen; its log: {open(self.log).read()}")

    def destination(self):
        """The ssh options and destination that reach the remote account here."""
        return ["-p", str(self.port), "-i", os.path.join(self.dir, "client"),
                "-o", "UserKnownHostsFile=/dev/null", "-o", "StrictHostKeyChecking=no",
                "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", f"{REMOTE_USER}@127.0.0.1"]

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
