"""Talking to switches, shared by deploy, drift and verify: which switches an endpoints file
lists (endpoints.py) and one SSH session per switch per command, opened in a bounded pool,
with one retry of a read that did not complete (sessions.py)."""
