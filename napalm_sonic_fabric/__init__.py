"""napalm community-driver entry point: napalm.get_network_driver("sonic_fabric")."""

from generator.devices.sonic import SonicDriver

__all__ = ["SonicDriver"]
