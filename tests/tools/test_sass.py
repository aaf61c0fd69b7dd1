"""tools/sass.py, and through it the machine code of memory-bound kernels, without a GPU.

The parser is checked on fixed SASS text. Where nvcc and cuobjdump are present (CI: the CUDA
toolkit and the nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm wheels of the test extra), chosen
kernels are compiled for sm_90 as the build compiles them, and their structure is checked:
their loads are issued together, before any of their values is used. That is what decides
their speed and what the source alone does not show: the H200 measured a softmax whose loads
compiled to one load, one use, the next load ... 45% slower than one that issued them
together, and a gather 15% slower for the same reason."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_tool():
    spec = importlib.util.spec_from_file_location("sass_tool", ROOT / "tools" / "sass.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


sass = _load_tool()

# Two kernels as cuobjdump prints them (cut): the first issues both loads before it reads
# R6 or R7; the second reads each load's register right after it (and stores in between).
LISTING = """
	code for sm_90
		Function : _Z8togetherPfPKf
	.headerflags	@"EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
        /*0020*/                   LDG.E R6, desc[UR4][R2.64] ;
        /*0030*/              @!P0 LDG.E R7, desc[UR4][R2.64+0x80] ;
        /*0040*/                   LDG.E.64 R8, desc[UR4][R2.64+0x100] ;
        /*0050*/                   FADD R10, R6, R7 ;
        /*0060*/                   FADD R10, R10, R9 ;
        /*0070*/                   STG.E desc[UR4][R4.64], R10 ;
        /*0080*/                   EXIT ;
		..........
		Function : _Z6apartPfPKf
	.headerflags	@"EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDG.E R6, desc[UR4][R2.64] ;
        /*0010*/                   STG.E desc[UR4][R4.64], R6 ;
        /*0020*/                   LDG.E R7, desc[UR4][R2.64+0x80] ;
        /*0030*/                   ISETP.GE.AND P0, PT, R7, RZ, PT ;
        /*0040*/                   LDG.E R8, desc[UR4][R2.64+0x100] ;
        /*0050*/                   MUFU.EX2 R9, R8 ;
        /*0060*/                   EXIT ;
"""

PTXAS = """ptxas info    : Compiling entry function '_Z8togetherPfPKf' for 'sm_90'
ptxas info    : Function properties for _Z8togetherPfPKf
    0 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads
ptxas info    : Used 12 registers, used 0 barriers, 368 bytes cmem[0]
"""


def test_parser_reads_kernels_instructions_and_load_batches():
    kernels = sass.parse_sass(LISTING)
    assert list(kernels) == ["_Z8togetherPfPKf", "_Z6apartPfPKf"]
    together, apart = kernels["_Z8togetherPfPKf"], kernels["_Z6apartPfPKf"]
    assert len(together.instructions) == 9 and together.count("LDG") == 3 and together.count("STG") == 1
    assert together.load_batches() == [3]  # a predicated load and a 64-bit one (R8, R9) count too
    assert apart.load_batches() == [1, 1, 1]
    assert apart.count("MUFU") == 1
    sass.parse_ptxas(PTXAS, kernels)
    assert together.registers == 12 and together.spill_bytes == 8 and apart.registers is None


def test_a_store_reads_its_value_and_a_compare_its_register():
    # STG's operands are all read; ISETP writes a predicate and reads R7.
    kernels = sass.parse_sass(LISTING)
    ops = [op for op, _ in kernels["_Z6apartPfPKf"].instructions]
    assert ops == ["LDG.E", "STG.E", "LDG.E", "ISETP.GE.AND", "LDG.E", "MUFU.EX2", "EXIT"]


def test_short_names_and_the_command_line_without_tools(monkeypatch, capsys):
    assert sass.short_name("_ZN9minitorch4cuda43_GLOBAL__N__4f1d2e24_10_softmax_cu_831aae0619softmax_rows_kernelIfLi32E"
                           ) == "softmax_rows_kernelIfLi32E"
    monkeypatch.setattr(sass, "unavailable_reason", lambda: "nvcc is not on PATH")
    assert sass.main(["cuda/softmax.cu"]) == 2
    assert "nvcc is not on PATH" in capsys.readouterr().err


needs_tools = pytest.mark.skipif(sass.unavailable_reason() is not None,
                                 reason=f"tools/sass.py: {sass.unavailable_reason()}")


def _kernels(source):
    return sass.compile_kernels(ROOT / "cuda" / source, "90")


def _find(kernels, fragment):
    found = [k for name, k in kernels.items() if fragment in name]
    assert found, f"no kernel named like {fragment!r}"
    return found


@needs_tools
def test_softmax_rows_issue_a_rows_loads_together():
    """softmax_rows_kernel (cuda/softmax.cu): a lane's 32 loads of a 1000-row in flight
    together, in every dtype, softmax and log_softmax; no spills; registers for at least 4
    blocks of 128 threads an SM. softmax_block_rows_kernel likewise for a thread's 32."""
    kernels = _kernels("softmax.cu")
    for dtype in ("f", "NS_4HalfE", "NS_8BFloat16E"):  # float64 keeps the online merge
        for log in ("0", "1"):
            (k,) = _find(kernels, f"softmax_rows_kernelI{dtype}Li32ELb{log}E")
            batches = k.load_batches()
            assert k.count("LDG") == 32 and sum(batches) == 32, (dtype, log, batches)
            # float32 as one batch; the compiler may split the 16-bit ones' once
            assert batches == [32] if dtype == "f" else len(batches) <= 2, (dtype, log, batches)
            assert k.spill_bytes == 0
            assert k.registers <= 128, (dtype, log, k.registers)
            # rows of up to 16384, a block of 512 threads a row: a thread's 32 loads together
            # too (float32 in one batch), within the 64 registers 512 threads may have
            (k,) = _find(kernels, f"softmax_block_rows_kernelI{dtype}Li32ELb{log}E")
            batches = k.load_batches()
            assert k.count("LDG") == 32 and sum(batches) == 32, (dtype, log, batches)
            assert batches == [32] if dtype == "f" else len(batches) <= 2, (dtype, log, batches)
            assert k.spill_bytes == 0 and k.registers <= 64, (dtype, log, k.registers)


@needs_tools
def test_gathers_issue_their_index_reads_together_then_their_value_reads():
    """gather_phased_kernel and gather_rows_phased_kernel (cuda/indexing.cu): a thread's four
    index reads in flight together, then its four value reads (not one read, its store, the
    next read)."""
    kernels = _kernels("indexing.cu")
    for name in ("gather_phased_kernelIjE", "gather_phased_kernelItE", "gather_rows_phased_kernelIjE",
                 "gather_rows_phased_kernelImE"):
        for k in _find(kernels, name):
            batches = k.load_batches()
            assert min(batches[:2]) >= 4, (name, batches)
            assert k.spill_bytes == 0


@needs_tools
def test_attention_stages_its_forward_and_dq_tiles_by_cp_async():
    """The tensor-core attention (cuda/attention_mma.cu) stages K and V tiles by cp.async
    (LDGSTS: global to shared memory, no registers, all of a thread's copies in flight) in the
    forward and dQ kernels, and by loads and stores in dK/dV (whose registers are full). The
    forward spills nothing, at either head size and in every type. B fragments come by ldmatrix
    (LDSM): those of Q K^T (and the backward's other first products) in every type, those of
    P V, dS K, P^T dO and dS^T Q in 16 bits (float32 would need a transpose of 32-bit values)."""
    kernels = _kernels("attention_mma.cu")
    for dtype in ("f", "NS_4HalfE", "NS_8BFloat16E"):
        for h in ("64", "128"):
            (fwd,) = _find(kernels, f"attention_mma_kernelI{dtype}Li{h}E")
            (dq,) = _find(kernels, f"attention_mma_dq_kernelI{dtype}Li{h}E")
            (dkdv,) = _find(kernels, f"attention_mma_dkdv_kernelI{dtype}Li{h}E")
            assert fwd.count("LDGSTS") > 0 and fwd.spill_bytes == 0, (dtype, h)
            assert (dq.count("LDGSTS") > 0) == (dtype != "f" or h == "64"), (dtype, h)
            assert dkdv.count("LDGSTS") == 0
            # B fragments by ldmatrix (LDSM): the first product's in every type, the second's in 16 bits
            for k in (fwd, dq, dkdv):
                assert k.count("LDSM") >= 16 * int(h) // 64, (dtype, h, k.count("LDSM"))


@needs_tools
def test_layer_norm_rows_issue_a_rows_loads_together():
    """layer_norm_rows_kernel and layer_norm_backward_rows_kernel (cuda/layer_norm.cu): a lane's
    values of a row (up to 32: D <= 1024) loaded before any is used -- the forward's x in one
    batch, the backward's g, w and x in batches of dozens -- where the kernels that read the row
    in passes kept 2-6 loads in flight. No spills, in float32 and both 16-bit types. Likewise
    layer_norm_block_rows_kernel and its backward (D <= 8192, a block a row)."""
    kernels = _kernels("layer_norm.cu")
    for dtype in ("f", "NS_4HalfE", "NS_8BFloat16E"):
        for per_lane in (8, 16, 32):
            (fwd,) = _find(kernels, f"layer_norm_rows_kernelI{dtype}Li{per_lane}E")
            (bwd,) = _find(kernels, f"layer_norm_backward_rows_kernelI{dtype}Li{per_lane}E")
            assert fwd.load_batches()[0] == per_lane, (dtype, per_lane, fwd.load_batches())
            # the write's weights and biases: 8 values' worth at a time, not a pair per value
            assert max(fwd.load_batches()[1:]) >= 7, (dtype, per_lane, fwd.load_batches())
            assert max(bwd.load_batches()) >= 2 * per_lane, (dtype, per_lane, bwd.load_batches())
            assert fwd.spill_bytes == 0 and bwd.spill_bytes == 0
            # rows of 1025 to 8192 (a block a row): the same batches for a thread's values
            (fwd,) = _find(kernels, f"layer_norm_block_rows_kernelI{dtype}Li{per_lane}E")
            (bwd,) = _find(kernels, f"layer_norm_backward_block_rows_kernelI{dtype}Li{per_lane}E")
            assert fwd.load_batches()[0] == per_lane, (dtype, per_lane, fwd.load_batches())
            assert max(bwd.load_batches()) >= 2 * per_lane, (dtype, per_lane, bwd.load_batches())
            assert fwd.spill_bytes == 0 and bwd.spill_bytes == 0
