"""napalm drivers for the switch operating systems fabricgen deploys to."""
