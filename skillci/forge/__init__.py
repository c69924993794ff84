"""Pull requests: the Forge protocol and its implementations (LocalForge, GitHubForge)."""
