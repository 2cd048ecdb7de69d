"""`python -m bot` is `anchorgpu run`."""

from anchorgpu.cli import main

raise SystemExit(main(["run"]))
