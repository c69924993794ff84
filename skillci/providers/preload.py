"""Import litellm the way skillci wants it (offline cost map, sim provider registered).

Listed in the process-pool forkserver's preload so that workers share one import.
"""

from skillci.providers.client import litellm_module

litellm_module()
