"""Learned models that run in skillci's process, offline (``local/*`` routes; design 444)."""
