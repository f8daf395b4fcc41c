"""Where the store keeps its rows: SQLite (`sqlite.py`, the embedded default),
PostgreSQL (`postgres.py`, a team's shared server, with its schema and its
LISTEN/NOTIFY listener) and memory (`memory.py`). Each is a `Store`
(`..protocols`); the approval rules they share are in `..approvals.claims`.

Import the backend you need from its module: this package imports nothing, so
opening SQLite never loads psycopg.
"""
