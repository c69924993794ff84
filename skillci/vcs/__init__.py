"""Git access: every git write goes through :class:`skillci.vcs.git.Git`."""
