"""One run, the parent's side: the session (session.py) and what it leans on:
the worker pool and pipe (pool, channel), host calls (host_call, host_threads,
handle_calls, host_functions), the call audit and the answer order (audit,
answers), the run's spec (spec), and what the run gives back (envelope,
guest_errors, scope_values, source_check)."""
