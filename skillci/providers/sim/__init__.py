"""The embedded simulated models ``sim/student`` and ``sim/teacher`` (a SIMULATOR).

They are deterministic stand-ins for a weak student and a strong teacher, registered with
litellm's custom-provider API so that the agent loop, budgets, cache and run records are
exercised exactly as with a real provider. They see only what a real model sees: the
messages (system prompt with the skill bootstrap, the task instruction, tool results and
the skill files the agent loaded). Their behaviour contract is docs/simulator.md.

- :mod:`.provider` — the litellm ``CustomLLM`` adapter (imports litellm; loaded lazily).
- :mod:`.transcript` — messages -> what the model has seen so far.
- :mod:`.skilltext` — skill text -> behaviours (seed-style action phrases).
- :mod:`.evidence` — CI logs, pytest and checker output -> failing tests, frames, errors.
- :mod:`.repair` — the fix repertoire (student < teacher): candidate one-line edits.
- :mod:`.policy` — the procedure itself, written as a generator and replayed per call.
"""

#: Bump when the simulator's behaviour changes: it is part of every sim trial's cache key.
SIM_VERSION = "sim-v1"
