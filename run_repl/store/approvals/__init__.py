"""The at-most-once promise, in one package: an approved call runs at most once,
whatever fails; a decision is never lost or stranded.

- `claims.py`: the claim rules, written once over a small row interface that
  each backend supplies with a transaction: claims are leases (`LEASE_S`)
  renewed on a heartbeat; `record_decisions`, `claim_decided`, `resumable`,
  `settle_lapsed` for resumes that run where the host lives;
- `flow.py`: from an interrupted run to its resume (save, decide, resolve,
  `resume_decided`, recover), each resume holding its lease with a `Heartbeat`;
- `watch.py`: waiting for approvals to change (one reading thread for all waiters);
- `policy.py`: who may decide which namespace's approvals.

This package imports nothing itself: import from its modules.
"""
