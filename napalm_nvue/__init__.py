"""napalm community-driver entry point: napalm.get_network_driver("nvue")."""

from generator.deploy.drivers.nvue import NVUEDriver

__all__ = ["NVUEDriver"]
