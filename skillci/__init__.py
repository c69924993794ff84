"""skillci — Git-native CI/CD for agent Skills."""

__version__ = "0.1.0"
__all__ = ["__version__"]
