"""The fake ConnectX NIC tools and /sys tree now live in generator/lab/nic_tools.py (the lab's
simulated GPU servers run them too); the tests' older `from fake_nic import ...` keeps working."""

from generator.lab.nic_tools import *  # noqa: F401,F403
