"""KernelBench problem files the integration scripts import (written in KernelBench's own format)."""


def kernelbench_relu(batch_size=16, dim=1000, prelude="", in_forward=""):
    """KernelBench level 1 problem 19 (ReLU) at the given sizes. `prelude` is top-level code run before the Model
    class (at import), `in_forward` a statement run at the start of every forward() (at every evaluation)."""
    return f"""import torch
import torch.nn as nn
{prelude}
class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        {in_forward or "pass"}
        return torch.relu(x)

batch_size = {batch_size}
dim = {dim}

def get_inputs():
    return [torch.randn(batch_size, dim)]

def get_init_inputs():
    return []
"""
