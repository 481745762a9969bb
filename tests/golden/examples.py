from pathlib import Path

GOLDEN = ("small", "medium", "large", "medium-sonic", "phased", "rail-optimized")


def golden_dir(name: str) -> Path:
    return Path(__file__).resolve().parent / name
