"""Nodes of the evaluation graph: load the session, build each task's prompt, call the candidate,
match its response against the gold DAG (and feed back the gold observations), finish tasks and the session."""
