"""Adapters of real agents run through their headless CLI (one module per agent)."""
