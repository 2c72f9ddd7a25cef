"""Where the drivers find lidguard and the test helpers, and the figures every driver shares."""
import os

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..", ".."))
LIDGUARD = os.environ.get("LIDGUARD_BIN", os.path.join(REPO, "target", "debug", "lidguard"))
RECEIVER_BIN = os.path.join(REPO, "target", "debug", "lidguard-test-receiver")
LOGIND_BIN = os.path.join(REPO, "target", "debug", "lidguard-private-logind")
PHONE_BIN = os.path.join(REPO, "target", "debug", "lidguard-test-ntfy")

LID_MSG = "lid is closed"  # in every closed-lid refusal lidguard gives an agent
MODEL_DELAY = 1.5  # seconds the fake model waits before each scripted answer (status-poll windows)

# ask before sleep
POST_STOP_DELAY = 10  # postStopSuspendDelaySeconds: the least that lets lidguard ask
REPLY_WAIT = 20  # closedLidStopFollowUpDelaySeconds: the least reply wait
ASK_REPLY = "also update the README"
