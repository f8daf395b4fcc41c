"""The at-most-once promise, in one package: an approved call runs at most once,
whatever fails; a decision is never lost or stranded.

- `claims.py`: the claim rules, written once over a small row interface that
  each backend supplies with a transaction;
- `flow.py`: from an interrupted run to its resume (save, decide, resolve, recover);
- `watch.py`: waiting for approvals to change (one reading thread for all waiters);
- `policy.py`: who may decide which namespace's approvals.

This package imports nothing itself: import from its modules.
"""
