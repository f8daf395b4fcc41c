"""The child process: the template that forks one worker per run, and the worker.

Stdlib, `_quickjs`, tree-sitter and pyseccomp only; of run_repl nothing but
`run_repl.sandbox.errors` (an import-linter contract holds it), so a worker
starts fast and small.
"""
