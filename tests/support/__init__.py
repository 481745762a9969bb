"""Real services the tests and benches run against (never imported by fabricgen itself)."""
