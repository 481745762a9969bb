"""The DCIM as source of truth (issue 37): the plan exported to Nautobot, the physical facts
(serials, MACs) pulled back for day 0. Pure modules derive and compare; nautobot.py alone speaks
HTTP."""
