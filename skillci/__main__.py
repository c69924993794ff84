from skillci.cli.main import entrypoint

entrypoint()
