"""khive_torch: the PyTorch side of khive (issue 14).

  reference.run_reference    a definition's PyTorch reference as the correctness oracle (outputs in the
                             task's order and dtypes)
  constraints                FlashInfer-Bench / SOL-ExecBench constraints evaluated safely (no eval)
  inputs.make_inputs         random / scalar / safetensors / custom inputs of a workload
  evaluate.evaluate_task     the reference over a task's correctness workloads (does the oracle run?)
  kernelbench.import_problem a KernelBench problem file as a khive task directory
  (the KernelBench ModelNew file is written by khive itself: src/khive/interop/modelnew.cpp)

Command line: python3 -m khive_torch {import-kernelbench,evaluate} ... (see __main__.py).
torch is imported lazily, so the constraint checker works without it.
"""
