import os, sys, time
t0 = time.time()
import torch
t1 = time.time()
from torch._inductor import cpu_vec_isa
from torch._inductor.cpp_builder import CppTorchOptions
isa = cpu_vec_isa.supported_vec_isa_list[0] if hasattr(cpu_vec_isa, "supported_vec_isa_list") else None
t2 = time.time()
opts = CppTorchOptions(vec_isa=isa, warning_all=False) if isa is not None else None
t3 = time.time()
isas = cpu_vec_isa.valid_vec_isa_list()
t4 = time.time()
print(sys.argv[1], f"import torch {t1-t0:.1f}s, options {t3-t2:.1f}s, probe {t4-t3:.1f}s", [str(i) for i in isas], flush=True)
