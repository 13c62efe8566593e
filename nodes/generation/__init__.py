"""Roles of the generation graph (User, Planner, Checker, Tool, Agent) and the role registry."""
