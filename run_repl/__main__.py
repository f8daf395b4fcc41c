"""`python -m run_repl`: the `run-repl` command."""

from .command import main

raise SystemExit(main())
