"""Nodes of the evaluation graph: load the session, build each task's prompt, call the candidate,
match its response against the gold DAG, feed back gold observations, finish tasks and the session."""
