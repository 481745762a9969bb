"""`fabricgen acceptance`: nccl-tests after bring-up, measured against the capacity model.

- runs.py: which runs to make (one per rail group, one over the whole fabric)
- expected.py: the busbw the capacity model predicts for each run and size (expected.json)
- scripts.py: hostfiles, the Slurm batch script, the mpirun script, nccl.env
- writer.py: writes DIR without touching files that are not ours
- nccl_log.py: parses nccl-tests output as its sources print it
- compare.py: matches logs to runs and judges every row against the prediction
- report.py: the rich table and measured.json (points to recalibrate the model from)
- command.py: the CLI glue (exit codes 0, 1, 3)
"""
