"""What the browser runners (relying-party test, forward-auth test) share: the check lines and their count, and
stopping a server they started. Standard library only."""
import subprocess


class Results:
    """One line per check, `ok` or `FAIL`; the runner closes with "N passed, N failed"."""

    def __init__(self):
        self.passed = 0
        self.failed = []

    def check(self, name, ok, detail=""):
        if ok:
            self.passed += 1
        else:
            self.failed.append(name)
        print(f"{'ok  ' if ok else 'FAIL'} {name}" + (f" — {detail}" if detail else ""), flush=True)
        return ok


def stop(process):
    """Terminates a process this runner started, and kills it if it does not go within 10 s."""
    if process and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
