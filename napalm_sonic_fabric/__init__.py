"""napalm community-driver entry point: napalm.get_network_driver("sonic_fabric")."""

from generator.deploy.drivers.sonic import SonicDriver

__all__ = ["SonicDriver"]
