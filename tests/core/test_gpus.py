"""Spreading candidates over GPUs: which GPUs count, how many jobs by default, which GPU a candidate gets."""

import pytest

from minimizer.runner.gpus import GpuPool, default_jobs, visible_gpus


def no_probe():
    raise AssertionError("CUDA_VISIBLE_DEVICES is set: nvidia-smi must not be asked")


@pytest.mark.parametrize(
    "listed, gpus",
    [("0,1,2", ("0", "1", "2")), (" 2, 0 ", ("2", "0")), ("", ()), ("1,-1,2", ("1",)), ("GPU-8f1e,GPU-77aa", ("GPU-8f1e", "GPU-77aa"))],
)
def test_visible_gpus_follow_cuda_visible_devices_as_cuda_reads_it(listed, gpus):
    assert visible_gpus({"CUDA_VISIBLE_DEVICES": listed}, probe=no_probe) == gpus


def test_without_cuda_visible_devices_the_probe_decides():
    assert visible_gpus({}, probe=lambda: ("0", "1")) == ("0", "1")


@pytest.mark.parametrize(
    "cores, gpus, jobs",
    [(None, 0, 1), (2, 0, 1), (3, 0, 1), (16, 0, 8), (16, 1, 8), (64, 4, 8), (128, 16, 16), (8, 16, 4)],
)
def test_default_jobs_come_from_cores_and_gpus(cores, gpus, jobs):
    assert default_jobs(cores, gpus) == jobs


def test_one_gpu_or_none_changes_nothing():
    for gpus in ((), ("0",)):
        with GpuPool(gpus).lease() as env:
            assert env == {}


def test_each_candidate_gets_the_least_busy_gpu_first_in_line():
    pool = GpuPool(("0", "1", "2"))
    with pool.lease() as first, pool.lease() as second:
        assert (first, second) == ({"CUDA_VISIBLE_DEVICES": "0,1,2"}, {"CUDA_VISIBLE_DEVICES": "1,2,0"})
        with pool.lease() as third, pool.lease() as fourth:
            assert third == {"CUDA_VISIBLE_DEVICES": "2,0,1"}
            assert fourth == {"CUDA_VISIBLE_DEVICES": "0,1,2"}  # all busy once: back to the first
    with pool.lease() as again:
        assert again == {"CUDA_VISIBLE_DEVICES": "0,1,2"}  # every lease was returned


def test_a_lease_is_returned_when_the_candidate_raises():
    pool = GpuPool(("0", "1"))
    with pytest.raises(RuntimeError):
        with pool.lease():
            raise RuntimeError("the launch failed")
    with pool.lease() as env:
        assert env == {"CUDA_VISIBLE_DEVICES": "0,1"}
