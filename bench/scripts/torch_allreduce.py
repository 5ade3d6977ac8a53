#!/usr/bin/env python3
"""PyTorch's NCCL all-reduce (average), measured the way `gradsync bench` measures, for a same-run
comparison on the GPU node. Spawns one process per GPU (torch.distributed, backend nccl, fp32) and
prints nccl-tests style tables from rank 0.

Two timings per size:
  per-call   host clock around all_reduce + torch.cuda.synchronize(), median over --iters calls:
             what `gradsync bench` reports (its synchronize() returns once every GPU holds the average)
  pipelined  --iters calls queued back to back, timed with CUDA events, divided by --iters:
             what nccl-tests reports (no host round trip per call)
busbw = algbw * 2(n-1)/n, as nccl-tests computes it. #wrong counts elements off the float64 average.

  python3 bench/scripts/torch_allreduce.py --gpus 4 --sizes 1M,4M,16M,64M,256M,1G
"""
import argparse
import os
import socket
import statistics
import sys
import time


def parse_size(text):
    text = text.strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
    return int(text[:-1] if text[-1:] in "KMG" else text) * mult


def worker(rank, world, port, sizes, warmup, iters, check):
    import torch
    import torch.distributed as dist

    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                            device_id=dev)
    if rank == 0:
        print(f"# torch {torch.__version__}, NCCL {'.'.join(map(str, torch.cuda.nccl.version()))}, "
              f"{world} x {torch.cuda.get_device_name(rank)}, warmup {warmup}, iters {iters}, "
              f"NCCL_NVLS_ENABLE={os.environ.get('NCCL_NVLS_ENABLE')}")
        print(f"# torch.distributed all_reduce(op=AVG), fp32, one process per GPU")
        print("#%12s %12s %9s %6s %10s %10s %8s %8s %10s %8s %8s %7s" % (
            "size", "count", "type", "redop", "per-call", "spread", "algbw", "busbw", "pipelined", "algbw", "busbw", "#wrong"))
        print("#%12s %12s %9s %6s %10s %10s %8s %8s %10s %8s %8s %7s" % (
            "(B)", "(elements)", "", "", "(us)", "(us)", "(GB/s)", "(GB/s)", "(us)", "(GB/s)", "(GB/s)", ""))
        sys.stdout.flush()
    factor = 2.0 * (world - 1) / world
    for size in sizes:
        count = size // 4
        gen = torch.Generator(device=dev).manual_seed(1000 + rank)
        x = torch.rand(count, device=dev, generator=gen, dtype=torch.float32) * 2 - 1
        wrong = -1
        if check:
            dist.all_reduce(x, op=dist.ReduceOp.AVG)
            ref = torch.zeros(count, device=dev, dtype=torch.float64)
            absum = torch.zeros(count, device=dev, dtype=torch.float64)
            for q in range(world):
                g = torch.Generator(device=dev).manual_seed(1000 + q)
                v = (torch.rand(count, device=dev, generator=g, dtype=torch.float32) * 2 - 1).double()
                ref += v
                absum += v.abs()
                del v
            ref /= world
            tol = 2.0 ** -24 * (world + 1) * absum / world + 2.0 ** -24 * ref.abs() + 1.1754943508222875e-38
            wrong_t = ((x.double() - ref).abs() > tol).sum()
            dist.all_reduce(wrong_t, op=dist.ReduceOp.SUM)
            wrong = int(wrong_t.item())
            del ref, absum
        for _ in range(warmup):
            dist.all_reduce(x, op=dist.ReduceOp.AVG)
        torch.cuda.synchronize()
        dist.barrier()
        micros = []
        for _ in range(iters):
            t0 = time.perf_counter_ns()
            dist.all_reduce(x, op=dist.ReduceOp.AVG)
            torch.cuda.synchronize()
            micros.append((time.perf_counter_ns() - t0) / 1e3)
        dist.barrier()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            dist.all_reduce(x, op=dist.ReduceOp.AVG)
        end.record()
        torch.cuda.synchronize()
        pipelined = start.elapsed_time(end) * 1e3 / iters
        if rank == 0:
            med = statistics.median(micros)
            print(" %12d %12d %9s %6s %10.1f %10s %8.2f %8.2f %10.1f %8.2f %8.2f %7s" % (
                size, count, "float", "avg", med, "%.0f-%.0f" % (min(micros), max(micros)),
                size / med / 1e3, size / med / 1e3 * factor, pipelined, size / pipelined / 1e3,
                size / pipelined / 1e3 * factor, "N/A" if wrong < 0 else str(wrong)))
            sys.stdout.flush()
        del x
        torch.cuda.empty_cache()
    dist.barrier()
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gpus", type=int, default=4)
    p.add_argument("--sizes", default="1M,4M,16M,64M,256M,1G", help="bytes per GPU, K/M/G suffixes")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--no-check", action="store_true", help="skip the float64 check")
    a = p.parse_args()
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast must stay off on the GPU node
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sizes = [parse_size(t) for t in a.sizes.split(",")]
    mp.spawn(worker, args=(a.gpus, port, sizes, a.warmup, a.iters, not a.no_check), nprocs=a.gpus, join=True)


if __name__ == "__main__":
    main()
