"""One PASS/FAIL line per check, counted for the driver's closing `N passed, M failed`."""

RESULTS = []  # (ok, name, detail)
PASS_DETAIL = 300  # characters of a passed check's detail shown


def say(msg):
    print(msg, flush=True)


def check(name, ok, detail=""):
    ok = bool(ok)
    RESULTS.append((ok, name, detail))
    text = "" if detail in ("", None) else str(detail)
    if ok and len(text) > PASS_DETAIL:  # a failure says all it knows; a pass, enough to see why
        text = f"{text[:PASS_DETAIL]}... ({len(text)} characters)"
    say(f"{'PASS' if ok else 'FAIL'} {name}" + (f" -- {text}" if text else ""))
    return ok


class _ScenarioChecks:
    """`R.check(scenario, name, ok, detail)`: a check named after its scenario in brackets."""

    @staticmethod
    def check(scenario, name, ok, detail=""):
        return check(f"[{scenario}] {name}", ok, detail)


R = _ScenarioChecks()


def counts():
    passed = sum(1 for ok, _, _ in RESULTS if ok)
    return passed, len(RESULTS) - passed
