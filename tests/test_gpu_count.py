"""The process pool counts GPUs (``executors._gpu_count``: one worker per visible GPU, else one per CPU) through
torch only where an NVIDIA device node exists (``/dev/nvidia0``, ...; ``/dev/dxg`` under WSL); elsewhere it counts
none without importing torch.  torch is replaced by a stand-in that reports 3 devices, so the tests run anywhere."""

import sys
import types

import pytest

from implicitbias import executors


def _torch_with(devices: int) -> types.SimpleNamespace:
    return types.SimpleNamespace(cuda=types.SimpleNamespace(device_count=lambda: devices))


def _devices(monkeypatch, nodes: list[str], dxg: bool) -> None:
    monkeypatch.setattr(executors.glob, "glob", lambda pattern: nodes if pattern == "/dev/nvidia[0-9]*" else [])
    monkeypatch.setattr(executors.os.path, "exists", lambda path: dxg and path == "/dev/dxg")
    monkeypatch.setitem(sys.modules, "torch", _torch_with(3))


def test_without_a_device_node_no_gpu_is_counted(monkeypatch):
    _devices(monkeypatch, [], dxg=False)
    assert executors._gpu_count() == 0


@pytest.mark.parametrize("nodes, dxg", [(["/dev/nvidia0", "/dev/nvidia1"], False), ([], True)])
def test_with_a_device_node_torch_counts_them(monkeypatch, nodes, dxg):
    _devices(monkeypatch, nodes, dxg)
    assert executors._gpu_count() == 3
