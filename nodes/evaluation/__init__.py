"""Nodes of the evaluation graph: load the session, build each task's prompt, call the candidate,
match its response against the gold DAG (feeding back the gold observations, closing each task), finish the session."""
