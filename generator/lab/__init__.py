"""Lab: simulated NVIDIA switches (Cumulus NVUE, SONiC) behind real SSH on 127.0.0.1.

control.lab_up / lab_down start and stop one background process (server.py) that
serves every device; nvue.py and sonic.py hold the device semantics, schema.py the
documented NVUE paths (data/nvue_paths.tsv, from build_schema.py), faults.py the
injected failures. Nothing outside generator/lab knows the lab exists.
"""
