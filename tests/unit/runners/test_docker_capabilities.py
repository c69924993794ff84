"""The Docker runner's capabilities from its engine's ``docker info`` (design 251)."""

from __future__ import annotations

from pathlib import Path

from skillci.runners.capabilities import docker_capabilities, engine_gpus


def test_cpus_and_memory_are_the_engines() -> None:
    caps = docker_capabilities({"NCPU": 6, "MemTotal": 12 * 2**30, "Runtimes": {"runc": {}}})
    assert (caps.cpus, caps.memory_mb, caps.gpus) == (6.0, 12288, 0)
    assert caps.resources_of == "the Docker engine" and caps.mounts_workdir
    assert caps.workdirs is None


def test_without_an_engine_it_is_this_machines_figures() -> None:
    caps = docker_capabilities(None)
    assert caps.resources_of == "this machine" and caps.gpus == 0
    assert caps.memory_mb is not None and caps.memory_mb > 0


def test_gpus_are_the_cdi_devices_or_the_nvidia_runtimes_device_nodes(tmp_path: Path) -> None:
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "null"):
        (tmp_path / name).touch()
    assert engine_gpus({"Runtimes": {"runc": {}}}, tmp_path) == 0  # no runtime: none attachable
    assert engine_gpus({"Runtimes": {"runc": {}, "nvidia": {}}}, tmp_path) == 2
    cdi = {
        "DiscoveredDevices": [
            {"Source": "cdi", "ID": "nvidia.com/gpu=0"},
            {"Source": "cdi", "ID": "nvidia.com/gpu=1"},
            {"Source": "cdi", "ID": "nvidia.com/gpu=2"},
            {"Source": "cdi", "ID": "nvidia.com/gpu=all"},
        ]
    }
    assert engine_gpus(cdi, tmp_path) == 3


def test_the_network_needs_a_bridge_and_missing_images_are_reasons() -> None:
    from skillci.tasks.environment import EnvRequirements, check_environment

    req = EnvRequirements(
        task_id="t", dockerfile=True, base_images=["ubuntu:24.04"], allow_internet=True
    )
    no_bridge = docker_capabilities({"NCPU": 2}, networks=["host", "none"])
    assert not no_bridge.network_open and no_bridge.network_closed
    bridge = docker_capabilities({"NCPU": 2}, networks=["bridge", "host", "none"])
    assert check_environment(req, bridge).supported
    lacking = docker_capabilities(
        {"NCPU": 2}, networks=["host", "none"], missing_images=["ubuntu:24.04"]
    )
    assert check_environment(req, lacking).reasons == [
        "image ubuntu:24.04 is not in the Docker engine (skillci pulls nothing: docker pull or "
        "load it first)",
        "allow_internet = true, and this runner has no network",
    ]
