"""``posthoc demo --gateway-port``: the port of every worker link the demo prints is the user's to fix, kept for a
rerun; a taken one is said in one line before anything starts (no Label Studio is started by these tests)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from posthoc.jobs.demo import demo_ports
from posthoc.labelstudio.ports import free_port


def test_a_given_gateway_port_is_used_and_kept_for_the_next_run(tmp_path: Path) -> None:
    chosen = free_port()
    ports = demo_ports(tmp_path, ls_port=None, backend_port=None, gateway_port=chosen)
    assert ports[2] == chosen and len(set(ports)) == 3
    assert json.loads((tmp_path / "demo-ports.json").read_text(encoding="utf-8"))["gateway"] == chosen
    assert demo_ports(tmp_path, ls_port=None, backend_port=None)[2] == chosen  # a rerun without the option


def test_a_taken_gateway_port_ends_in_one_line_before_anything_starts(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "posthoc.cli.main", "demo", "--out", str(tmp_path / "demo"),
                               "--gateway-port", str(port), "--no-serve"], capture_output=True, text=True,
                              timeout=120, check=False)
    assert done.returncode == 3, done.stderr
    assert done.stderr.strip() == (f"posthoc: service error: port {port} on 127.0.0.1 is in use; choose another "
                                   "with --gateway-port")
    assert not (tmp_path / "demo").exists()
