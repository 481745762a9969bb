"""napalm community-driver entry point: napalm.get_network_driver("nvue")."""

from generator.devices.nvue import NVUEDriver

__all__ = ["NVUEDriver"]
