#!/usr/bin/env python3
"""PyTorch DDP (Gloo) counterpart of examples/djl-training's ShapesTraining, for docs/PERFORMANCE.md's comparison:
the same CNN (conv 16, pool, conv 32, pool, linear 64, linear 6 on 1 x 16 x 16 images), the same 6,000 training
images a epoch, the same batch per rank, SGD with momentum 0.9, torch's DistributedSampler and DataLoader. Rank 0
prints each epoch's images per second of the whole job, as ShapesTraining does.

    python3 -m torch.distributed.run --nproc_per_node 4 tools/ddp-shapes.py EPOCHS BATCH_PER_RANK
"""
import math
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

IMAGES = 6000


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc1 = nn.Linear(32 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, 6)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


def main():
    epochs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    batch = int(sys.argv[2]) if len(sys.argv) > 2 else 32
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    generator = torch.Generator().manual_seed(1)
    images = torch.randn(IMAGES, 1, 16, 16, generator=generator)
    labels = torch.randint(0, 6, (IMAGES,), generator=generator)
    data = TensorDataset(images, labels)
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=42)
    loader = DataLoader(data, batch_size=batch, sampler=sampler)
    torch.manual_seed(1)
    model = DistributedDataParallel(Net())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    padded = math.ceil(IMAGES / world) * world
    for epoch in range(epochs):
        sampler.set_epoch(epoch)
        start = time.perf_counter()
        for x, y in loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        dist.barrier()
        seconds = time.perf_counter() - start
        if rank == 0:
            print("epoch %d: loss %.4f, %.0f images/s" % (epoch + 1, loss.item(), padded / seconds), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
