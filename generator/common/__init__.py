"""What every part of fabricgen does the same way with what a user names: read a file within a
bound, load YAML within a bound, replace a file atomically."""
