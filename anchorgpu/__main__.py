"""`python -m anchorgpu` is the `anchorgpu` command."""

from anchorgpu.cli import main

raise SystemExit(main())
