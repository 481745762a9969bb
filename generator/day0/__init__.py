"""`fabricgen day0`: the bring-up kit that takes racked switches from the factory to reachable
(issue 22). Kea DHCPv4 answers each switch of the inventory with its planned management
address and hostname plus the URL of its ZTP document; `http/` holds what ZTP fetches.

One job per module: inventory.py reads the `name,serial,mac` CSV, kea.py writes the DHCP
server config, cumulus_ztp.py and sonic_ztp.py the ZTP documents of each NOS, urls.py the
--url rules, kit.py puts the files together with their sha256 and writes them atomically.
"""
