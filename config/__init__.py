"""neardup configuration: one typed settings object."""

from neardup.config.settings import Settings, load_settings

__all__ = ["Settings", "load_settings"]
