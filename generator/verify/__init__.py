"""`fabricgen verify`: the built fabric against the plan (cabling, links, BGP, counters, host RoCE)."""
