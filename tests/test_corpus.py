"""Every corpus PTX file parses (or fails cleanly), round-trips through the
PTX emitter to an identical IR, and the emitted PTX is accepted by ptxas
whenever the original is."""
from __future__ import annotations

import pytest

import ptxc
from ptxc import PtxcError

from corpus import PTXAS, corpus_params, ptxas_accepts, ptxas_arch

# Files that are not valid PTX; ptxas rejects each of them too.
INVALID = {
    "ocelot/optix/closest_hit_radiance_CPU_INPUT.ptx": "missing .target",
    "ocelot/optix/closest_hit_radiance_CPU_INPUT_immediate.ptx": "missing .target",
    "ocelot/synthetic/register-calling-convention.ptx": "call with an empty operand",
    "zluda/test_spirv_fail/shared_ptr.ptx": "'extern' without a dot",
}


def relname(path) -> str:
    return str(path).split("/corpus/", 1)[1]


@pytest.mark.parametrize("path", corpus_params())
def test_corpus_file_round_trips(path):
    name = relname(path)
    if name in INVALID:
        with pytest.raises(PtxcError) as err:
            ptxc.load(str(path))
        assert f"{path}:" in str(err.value)
        return
    module = ptxc.load(str(path))
    emitted = module.to_ptx()
    again = ptxc.parse(emitted, str(path))
    assert again.print_ir() == module.print_ir()
    assert again.to_ptx() == emitted


@pytest.mark.skipif(PTXAS is None, reason="ptxas not on PATH")
@pytest.mark.parametrize("path", corpus_params())
def test_emitted_ptx_accepted_by_ptxas(path):
    if relname(path) in INVALID:
        pytest.skip("not valid PTX")
    module = ptxc.load(str(path))
    arch = ptxas_arch(module.target)
    if arch is None:
        pytest.skip(f"target {module.target} is older than this ptxas supports")
    ok, _ = ptxas_accepts(module.source, arch)
    if not ok:
        pytest.skip("ptxas rejects the original")
    ok, err = ptxas_accepts(module.to_ptx(), arch)
    assert ok, err
