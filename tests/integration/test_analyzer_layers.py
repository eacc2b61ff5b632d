"""The analyzer's layers (docs/design/analyzer_layers.md): scripts/lib/analyzer_layers.py,
which every build runs, accepts the tree as it is and rejects an include that
reaches upward; each layer's meson.build links only the layers it may see."""
from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "lib" / "analyzer_layers.py"


def run_check(analyzer: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), str(analyzer)], capture_output=True, text=True, check=False)


def layer_table() -> dict[str, list[str]]:
    spec = importlib.util.spec_from_file_location("analyzer_layers", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.LAYERS


def test_every_include_in_the_analyzer_goes_downward():
    result = run_check(REPO / "analyzer")
    assert (result.returncode, result.stderr) == (0, "")


def test_an_upward_include_is_named_with_its_file_and_line(tmp_path):
    copy = tmp_path / "analyzer"
    shutil.copytree(REPO / "analyzer", copy)
    header = copy / "model" / "retention.h"
    lines = header.read_text().splitlines()
    header.write_text("\n".join(lines + ['#include "reports/heap_report.h"']) + "\n")

    result = run_check(copy)

    assert result.returncode == 1
    assert result.stderr == (
        f"analyzer/model/retention.h:{len(lines) + 1}: model/ includes reports/heap_report.h, a layer it may "
        "not see; model/ may include common/, load/ (docs/design/analyzer_layers.md)\n")


def test_a_folder_outside_every_layer_is_rejected(tmp_path):
    copy = tmp_path / "analyzer"
    shutil.copytree(REPO / "analyzer", copy)
    (copy / "extras").mkdir()
    (copy / "extras" / "helper.cpp").write_text('#include "common/json_writer.h"\n')

    result = run_check(copy)

    assert result.returncode == 1
    assert result.stderr.startswith("analyzer/extras/helper.cpp:1: the folder extras/ is no analyzer layer")


def test_each_layer_links_only_the_layers_it_may_include():
    table = layer_table()
    deps = {"symbolize": "symbolize_dep"} | {name: f"analyzer_{name}_dep" for name in table if name != "symbolize"}
    for layer, allowed in table.items():
        build = (REPO / "analyzer" / layer / "meson.build").read_text()
        used = {name for name, dep in deps.items() if re.search(rf"\b{dep}\b", build)}
        assert layer in used, f"{layer}/meson.build declares no {deps[layer]}"
        assert used - {layer} <= set(allowed), f"{layer}/meson.build links {sorted(used - {layer} - set(allowed))}"
