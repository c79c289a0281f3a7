"""TAP output shared by the abi suite's Python checks."""


def run(tests):
    """Runs tests, a list of (name, fn) where fn() returns (ok, detail), and
    prints them as TAP, each failure's detail as diagnostics. Returns the
    exit status: 1 if any failed."""
    print(f"1..{len(tests)}")
    failed = 0
    for i, (name, fn) in enumerate(tests, 1):
        ok, detail = fn()
        print(f"{'ok' if ok else 'not ok'} {i} - {name}")
        if not ok:
            failed += 1
            for line in str(detail).splitlines():
                print(f"#   {line}")
    return 1 if failed else 0
