"""Tests against a live Nautobot (tests/sot/conftest.py: the `nautobot` fixture)."""
