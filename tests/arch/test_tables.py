"""The targets: sm_100/sm_120 limits as NVIDIA documents them, the names that reach them, and the
one-line error for anything else."""
from __future__ import annotations

import pytest

from dice_engine import CUDAGenerator
from dice_engine.arch import ARCHS, UnknownTarget, is_arch_name, occupancy, resolve
from dice_engine.intent import IntentError, parse_intent


@pytest.mark.parametrize("name, arch, gpu", [
    ("sm_100", "sm_100", "B200"), ("100", "sm_100", "B200"), ("10.0", "sm_100", "B200"),
    ("sm_100a", "sm_100", "B200"), ("compute_120", "sm_120", "GeForce RTX 5090"),
    ("B200", "sm_100", "B200"), ("GB200", "sm_100", "GB200"), ("b100", "sm_100", "B100"),
    ("RTX 5090", "sm_120", "GeForce RTX 5090"), ("NVIDIA GeForce RTX 5090", "sm_120", "GeForce RTX 5090"),
    ("RTX PRO 6000", "sm_120", "RTX PRO 6000 Blackwell"),
    ("NVIDIA RTX PRO 6000 Blackwell", "sm_120", "RTX PRO 6000 Blackwell"),
    ("sm_90a", "sm_90", "H100-SXM5-80GB"), ("Tesla T4", "sm_75", "Tesla T4"),
])
def test_names_resolve(name, arch, gpu):
    spec = resolve(name)
    assert (spec.name, spec.gpu_name) == (arch, gpu)


def test_blackwell_limits():
    b200, rtx = ARCHS["sm_100"], ARCHS["sm_120"]
    # sm_100: 228 KB of shared memory per SM, 227 KB per block, 64 warps, 32 blocks
    assert (b200.smem_per_sm, b200.smem_per_block_optin) == (228 * 1024, 227 * 1024)
    assert (b200.max_warps_per_sm, b200.max_blocks_per_sm, b200.sms) == (64, 32, 148)
    # sm_120: 100 KB of shared memory per SM, 99 KB per block, 48 warps (1536 threads)
    assert (rtx.smem_per_sm, rtx.smem_per_block_optin) == (100 * 1024, 99 * 1024)
    assert (rtx.max_threads_per_sm, rtx.max_warps_per_sm, rtx.sms) == (1536, 48, 170)
    assert not b200.has_wgmma and not rtx.has_wgmma and ARCHS["sm_90"].has_wgmma
    assert rtx.warp_mma_full_rate and not b200.warp_mma_full_rate
    assert resolve("RTX PRO 6000").sms == 188 and resolve("GB200").dram_gbps == 8000.0


@pytest.mark.parametrize("arch, threads, regs, smem, blocks, limiter", [
    # 64 regs → 2048/warp → 32 warps → 4 blocks of 8 warps (of 64)
    ("sm_100", 256, 64, 0, 4, "registers"),
    # 100 KiB + 1 KiB reserved = 103424 B → 233472 // 103424 = 2 blocks
    ("sm_100", 128, 32, 100 * 1024, 2, "shared memory"),
    # sm_120's 48 warps: 256-thread blocks of 32 regs → 6 blocks by warps
    ("sm_120", 256, 32, 0, 6, "warps"),
    # 48 KiB + 1 KiB = 50176 B → 102400 // 50176 = 2 blocks
    ("sm_120", 128, 32, 48 * 1024, 2, "shared memory"),
    # above sm_120's 99 KiB per block: cannot launch (fits sm_100)
    ("sm_120", 128, 32, 110 * 1024, 0, "shared memory"),
    ("sm_100", 128, 32, 110 * 1024, 2, "shared memory"),
])
def test_occupancy_on_blackwell(arch, threads, regs, smem, blocks, limiter):
    occ = occupancy(arch, threads, regs, smem)
    assert (occ.blocks_per_sm, occ.limiter) == (blocks, limiter)


@pytest.mark.parametrize("bad", ["bogus", "sm_95", "sm_101", "RTX 9090"])
def test_unknown_targets_are_one_line_key_errors(bad):
    with pytest.raises(KeyError) as caught:       # KeyError as before, for callers that catch it
        resolve(bad)
    assert isinstance(caught.value, UnknownTarget) and isinstance(caught.value, ValueError)
    message = str(caught.value)
    assert "\n" not in message and f"'{bad}'" in message and "sm_120" in message
    assert not message.startswith('"')            # not KeyError's repr-quoted text


def test_the_api_and_intents_say_the_same_line():
    with pytest.raises(UnknownTarget, match="unknown GPU or architecture 'bogus'"):
        CUDAGenerator("bogus")
    with pytest.raises(IntentError, match="unknown GPU or architecture 'bogus'"):
        parse_intent("y = relu(x); x: f32[1024]; arch=bogus")


@pytest.mark.parametrize("words, arch, gpu", [
    ("row-wise softmax of a 4096x1024 fp32 matrix for a B200", "sm_100", "B200"),
    ("row-wise softmax of a 4096x1024 fp32 matrix on an RTX 5090", "sm_120", "RTX 5090"),
    ("对4096x1024的fp32矩阵按行做softmax，针对RTX 5090", "sm_120", "RTX 5090"),
    ("softmax of a 4096x1024 fp32 matrix on GB200", "sm_100", "GB200"),
    ("softmax of a 4096x1024 fp32 matrix on an RTX PRO 6000 Blackwell", "sm_120", "RTX PRO 6000 Blackwell"),
    ("softmax of a 4096x1024 fp32 matrix, compute capability 12.0", "sm_120", None),
    ("softmax of a 4096x1024 fp32 matrix for sm_100a", "sm_100", None),
    ("softmax of a 4096x1024 fp32 matrix on Blackwell", "sm_100", None),
])
def test_words_pick_blackwell(words, arch, gpu):
    options = parse_intent(words).options
    assert options["arch"] == arch and options.get("gpu") == gpu


def test_arch_names_are_told_from_gpu_names():
    assert all(is_arch_name(n) for n in ("sm_100", "sm_120a", "90", "12.0", "compute_100f"))
    assert not any(is_arch_name(n) for n in ("B200", "RTX 5090", "a100"))
