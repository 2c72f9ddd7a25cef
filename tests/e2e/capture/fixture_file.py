"""One captured hook payload as a fixture file of tests/fixtures/<agent>/, as the capture drivers'
fixtures.py write them: the payload as the hook's stdin, fields over 20 KB dropped and named."""
import json
import os

BIG = 20 * 1024


def drop_big(obj, path, dropped):
    """obj without the fields whose JSON is over BIG; their dotted paths appended to `dropped`."""
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if len(json.dumps(v)) > BIG:
                dropped.append(f"{path}{k}")
                continue
            out[k] = drop_big(v, f"{path}{k}.", dropped)
        return out
    return obj


def write(out, scen, event, n, head, payload):
    """<out>/<scen>__<event>[.<n>].json, the n-th variant of the event in the scenario: `head`
    (provider, client, captured, scenario) and the event, then the payload as stdin. Its name."""
    name = f"{scen}__{event}.json" if n == 1 else f"{scen}__{event}.{n}.json"
    if n > 1:
        head = dict(head, scenario=f"{head['scenario']} [occurrence variant {n}]")
    dropped = []
    fx = dict(head, event=event, stdin=drop_big(payload, "", dropped))
    if dropped:
        fx["note"] = "dropped fields over 20 KB: " + ", ".join(dropped)
    with open(os.path.join(out, name), "w") as f:
        json.dump(fx, f, indent=2, ensure_ascii=False)
        f.write("\n")
    return name


def report(written, out):
    print("\n".join(written))
    print(f"{len(written)} fixtures in {os.path.normpath(out)}")
